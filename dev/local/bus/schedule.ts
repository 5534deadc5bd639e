/**
 * EventBridge schedule expressions: `rate(value unit)` and the six-field `cron(min hour dom month dow year)`,
 * evaluated in UTC like EventBridge does. Supported cron syntax: `*`, `?`, lists, ranges, steps
 * (`0/5`, `*\/10`, `1-30/2`), month and weekday names, `L` / `LW` / `nW` in day-of-month, and `L`, `nL`,
 * `n#k` in day-of-week (1 = SUN ... 7 = SAT).
 */

export class InvalidScheduleError extends Error {
  constructor(expression: string, reason: string) {
    super(`invalid schedule expression "${expression}": ${reason}`);
    this.name = 'InvalidScheduleError';
  }
}

export interface RateSchedule {
  kind: 'rate';
  expression: string;
  periodMs: number;
}

export interface CronSchedule {
  kind: 'cron';
  expression: string;
  minutes: Set<number>;
  hours: Set<number>;
  months: Set<number>;
  years: Set<number>;
  dayOfMonth: DayOfMonth | null;
  dayOfWeek: DayOfWeek | null;
}

interface DayOfMonth {
  days: Set<number>;
  last: boolean;
  lastWeekday: boolean;
  nearestWeekday: number[];
}

interface DayOfWeek {
  days: Set<number>;
  /** `5L`: the last Thursday of the month (values 1..7). */
  lastOfMonth: number[];
  /** `3#2`: the second Tuesday of the month. */
  nth: { day: number; n: number }[];
}

export type Schedule = RateSchedule | CronSchedule;

const UNIT_MS: Record<string, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };
const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const YEAR_MIN = 1970;
const YEAR_MAX = 2199;

/** Parses `rate(5 minutes)` or `cron(0/5 * * * ? *)`; throws InvalidScheduleError saying what is wrong. */
export function parseSchedule(expression: string): Schedule {
  if (typeof expression !== 'string') throw new InvalidScheduleError(String(expression), 'expected a string');
  const expr = expression.trim();
  const m = /^(rate|cron)\((.*)\)$/s.exec(expr);
  if (!m)
    throw new InvalidScheduleError(
      expression,
      'expected rate(value unit) or cron(minutes hours day-of-month month day-of-week year)',
    );
  return m[1] === 'rate' ? parseRate(expression, m[2].trim()) : parseCron(expression, m[2].trim());
}

function parseRate(expression: string, body: string): RateSchedule {
  const m = /^(\d+)\s+(minute|minutes|hour|hours|day|days)$/.exec(body);
  if (!m)
    throw new InvalidScheduleError(
      expression,
      'rate takes a positive whole number and a unit: minute(s), hour(s) or day(s), e.g. rate(5 minutes)',
    );
  const value = Number(m[1]);
  const unit = m[2];
  if (value < 1) throw new InvalidScheduleError(expression, 'the rate value must be at least 1');
  const singular = !unit.endsWith('s');
  if (value === 1 && !singular)
    throw new InvalidScheduleError(expression, `a value of 1 takes the singular unit (rate(1 ${unit.slice(0, -1)}))`);
  if (value > 1 && singular)
    throw new InvalidScheduleError(expression, `a value above 1 takes the plural unit (rate(${value} ${unit}s))`);
  return { kind: 'rate', expression, periodMs: value * UNIT_MS[singular ? unit : unit.slice(0, -1)] };
}

function parseCron(expression: string, body: string): CronSchedule {
  const fields = body.split(/\s+/);
  if (fields.length !== 6) {
    throw new InvalidScheduleError(
      expression,
      `cron takes 6 fields (minutes hours day-of-month month day-of-week year), got ${fields.length}`,
    );
  }
  const [min, hour, dom, month, dow, year] = fields;
  const fail = (reason: string): never => {
    throw new InvalidScheduleError(expression, reason);
  };
  if ((dom === '?') === (dow === '?')) {
    fail('exactly one of day-of-month and day-of-week must be "?" (they cannot both be set, nor both be "?")');
  }
  return {
    kind: 'cron',
    expression,
    minutes: parseField(min, 'minutes', 0, 59, [], fail),
    hours: parseField(hour, 'hours', 0, 23, [], fail),
    months: parseField(month, 'month', 1, 12, MONTHS, fail),
    years: parseField(year, 'year', YEAR_MIN, YEAR_MAX, [], fail),
    dayOfMonth: dom === '?' ? null : parseDayOfMonth(dom, fail),
    dayOfWeek: dow === '?' ? null : parseDayOfWeek(dow, fail),
  };
}

function parseNumber(
  text: string,
  field: string,
  min: number,
  max: number,
  names: string[],
  fail: (r: string) => never,
): number {
  const named = names.indexOf(text.toUpperCase());
  const n = named >= 0 ? named + 1 : /^\d+$/.test(text) ? Number(text) : NaN;
  if (Number.isNaN(n))
    fail(
      `${field}: "${text}" is not a number${names.length ? ` or a name (${names[0]}..${names[names.length - 1]})` : ''}`,
    );
  if (n < min || n > max) fail(`${field}: ${n} is outside ${min}-${max}`);
  return n;
}

function parseField(
  text: string,
  field: string,
  min: number,
  max: number,
  names: string[],
  fail: (r: string) => never,
): Set<number> {
  const out = new Set<number>();
  for (const item of text.split(',')) {
    if (item === '') fail(`${field}: empty list item`);
    const [rangeText, stepText, extra] = item.split('/');
    if (extra !== undefined) fail(`${field}: "${item}" has more than one "/"`);
    let from = min;
    let to = max;
    if (rangeText === '?') fail(`${field}: "?" is only allowed in day-of-month or day-of-week`);
    if (rangeText !== '*') {
      const [a, b, more] = rangeText.split('-');
      if (more !== undefined) fail(`${field}: "${rangeText}" is not a range`);
      from = parseNumber(a, field, min, max, names, fail);
      to = b === undefined ? (stepText === undefined ? from : max) : parseNumber(b, field, min, max, names, fail);
      if (to < from) fail(`${field}: range ${rangeText} runs backwards`);
    }
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) < 1)
        fail(`${field}: step "${stepText}" must be a positive whole number`);
      step = Number(stepText);
    }
    for (let n = from; n <= to; n += step) out.add(n);
  }
  return out;
}

function parseDayOfMonth(text: string, fail: (r: string) => never): DayOfMonth {
  const result: DayOfMonth = { days: new Set(), last: false, lastWeekday: false, nearestWeekday: [] };
  const plain: string[] = [];
  for (const item of text.split(',')) {
    const upper = item.toUpperCase();
    if (upper === 'L') result.last = true;
    else if (upper === 'LW') result.lastWeekday = true;
    else if (/^\d+W$/.test(upper))
      result.nearestWeekday.push(parseNumber(upper.slice(0, -1), 'day-of-month', 1, 31, [], fail));
    else plain.push(item);
  }
  if (plain.length) result.days = parseField(plain.join(','), 'day-of-month', 1, 31, [], fail);
  return result;
}

function parseDayOfWeek(text: string, fail: (r: string) => never): DayOfWeek {
  const result: DayOfWeek = { days: new Set(), lastOfMonth: [], nth: [] };
  const plain: string[] = [];
  for (const item of text.split(',')) {
    const upper = item.toUpperCase();
    if (upper === 'L') result.days.add(7);
    else if (/^.+L$/.test(upper))
      result.lastOfMonth.push(parseNumber(upper.slice(0, -1), 'day-of-week', 1, 7, WEEKDAYS, fail));
    else if (upper.includes('#')) {
      const [d, n] = upper.split('#');
      const day = parseNumber(d, 'day-of-week', 1, 7, WEEKDAYS, fail);
      if (!/^[1-5]$/.test(n)) fail(`day-of-week: "#${n}" must be #1 to #5`);
      result.nth.push({ day, n: Number(n) });
    } else plain.push(item);
  }
  if (plain.length) {
    for (const d of parseField(plain.join(','), 'day-of-week', 1, 7, WEEKDAYS, fail)) result.days.add(d);
  }
  return result;
}

const daysInMonth = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate(); // m is 1-based
const weekdayOf = (y: number, m: number, d: number) => new Date(Date.UTC(y, m - 1, d)).getUTCDay() + 1; // 1 = SUN

function nearestWeekday(y: number, m: number, d: number): number {
  const last = daysInMonth(y, m);
  const day = Math.min(d, last);
  const wd = weekdayOf(y, m, day);
  if (wd === 7) return day === 1 ? 3 : day - 1; // Saturday: Friday before, or Monday after when on the 1st
  if (wd === 1) return day === last ? day - 2 : day + 1; // Sunday: Monday after, or Friday before at month end
  return day;
}

function dayMatches(s: CronSchedule, y: number, m: number, d: number): boolean {
  if (s.dayOfMonth) {
    const dom = s.dayOfMonth;
    const last = daysInMonth(y, m);
    if (dom.days.has(d)) return true;
    if (dom.last && d === last) return true;
    if (dom.lastWeekday && d === nearestWeekday(y, m, last)) return true;
    return dom.nearestWeekday.some((n) => n <= last && nearestWeekday(y, m, n) === d);
  }
  const dow = s.dayOfWeek!;
  const wd = weekdayOf(y, m, d);
  if (dow.days.has(wd)) return true;
  if (dow.lastOfMonth.includes(wd) && d + 7 > daysInMonth(y, m)) return true;
  return dow.nth.some((x) => x.day === wd && Math.ceil(d / 7) === x.n);
}

/**
 * The first fire time strictly after `after`. For a rate, that is one period later (EventBridge starts
 * counting when the rule is created); for a cron, the next matching minute in UTC. Null when a cron never
 * fires again (its years are over).
 */
export function nextFireTime(schedule: Schedule, after: Date | number): Date | null {
  const from = typeof after === 'number' ? after : after.getTime();
  if (schedule.kind === 'rate') return new Date(from + schedule.periodMs);
  const start = new Date(Math.floor(from / 60_000) * 60_000 + 60_000);
  const minutes = [...schedule.minutes].sort((a, b) => a - b);
  const hours = [...schedule.hours].sort((a, b) => a - b);
  let y = start.getUTCFullYear();
  let m = start.getUTCMonth() + 1;
  let d = start.getUTCDate();
  let first = true;
  while (y <= YEAR_MAX) {
    if (!schedule.years.has(y)) {
      y += 1;
      m = 1;
      d = 1;
      first = false;
      continue;
    }
    if (!schedule.months.has(m)) {
      [y, m, d] = m === 12 ? [y + 1, 1, 1] : [y, m + 1, 1];
      first = false;
      continue;
    }
    if (d > daysInMonth(y, m)) {
      [y, m, d] = m === 12 ? [y + 1, 1, 1] : [y, m + 1, 1];
      first = false;
      continue;
    }
    if (dayMatches(schedule, y, m, d)) {
      const minHour = first ? start.getUTCHours() : 0;
      for (const h of hours) {
        if (h < minHour) continue;
        const minMinute = first && h === minHour ? start.getUTCMinutes() : 0;
        const minute = minutes.find((x) => x >= minMinute);
        if (minute !== undefined) return new Date(Date.UTC(y, m - 1, d, h, minute));
      }
    }
    d += 1;
    first = false;
  }
  return null;
}
