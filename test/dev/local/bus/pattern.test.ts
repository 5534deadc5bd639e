import { describe, expect, it } from 'vitest';
import { compilePattern, InvalidPatternError, matches } from '../../../../dev/local/bus/pattern.ts';

/**
 * Cases derived from the EventBridge documentation. Each case names the page and section its pattern
 * and event come from; where a case checks the negative side of a documented example, it says so.
 */
const DOCS = {
  patterns: 'https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html',
  arrays: 'https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns-arrays.html',
  nulls: 'https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns-null-values.html',
  filtering: 'https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns-content-based-filtering.html',
  operators: 'https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-pattern-operators.html',
  // Event Ruler is the matching library EventBridge uses; its README documents the finer points.
  ruler: 'https://github.com/aws/event-ruler/blob/main/README.md',
} as const;
type Doc = keyof typeof DOCS;

interface Case {
  doc: Doc;
  section: string;
  name: string;
  pattern: unknown;
  event: unknown;
  expected: boolean;
}

// "Event patterns": the Amazon EC2 example event.
const ec2Event = {
  version: '0',
  id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
  'detail-type': 'EC2 Instance State-change Notification',
  source: 'aws.ec2',
  account: '111122223333',
  time: '2017-12-22T18:43:48Z',
  region: 'us-west-1',
  resources: ['arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0'],
  detail: { 'instance-id': 'i-1234567890abcdef0', state: 'terminated' },
};

// "Event patterns" / "Matching null values and empty strings": the Auto Scaling example event.
const autoscalingEvent = {
  version: '0',
  id: '3e3c153a-8339-4e30-8c35-687ebef853fe',
  'detail-type': 'EC2 Instance Launch Successful',
  source: 'aws.autoscaling',
  account: '123456789012',
  time: '2015-11-11T21:31:47Z',
  region: 'us-east-1',
  resources: [],
  detail: { eventVersion: '', responseElements: null },
};

// "Event patterns": the (truncated) Macie Classic example event.
const macieEvent = {
  'detail-type': 'Macie Alert',
  source: 'aws.macie',
  detail: {
    'notification-type': 'ALERT_CREATED',
    tags: ['Custom_Alert', 'Insider'],
    'risk-score': 80,
    trigger: { 'alert-type': 'basic', risk: 8 },
  },
};

// Content filtering / Event Ruler: the example event the numeric, IP and complex examples are written for.
const rulerEvent = {
  version: '0',
  id: 'ddddd4-aaaa-7777-4444-345dd43cc333',
  'detail-type': 'EC2 Instance State-change Notification',
  source: 'aws.ec2',
  account: '012345679012',
  time: '2017-10-02T16:24:49Z',
  region: 'us-east-1',
  resources: ['arn:aws:ec2:us-east-1:123456789012:instance/i-000000aaaaaa00000'],
  detail: {
    'c-count': 5,
    'd-count': 3,
    'x-limit': 301.8,
    'source-ip': '10.0.0.33',
    'instance-id': 'i-000000aaaaaa00000',
    state: 'running',
  },
};

const withDetail = (detail: Record<string, unknown>) => ({
  ...rulerEvent,
  detail: { ...rulerEvent.detail, ...detail },
});
const withField = (field: string, value: unknown) => ({ source: 'example', [field]: value });

const ec2Terminated = {
  source: ['aws.ec2'],
  'detail-type': ['EC2 Instance State-change Notification'],
  detail: { state: ['terminated'] },
};

const cases: Case[] = [
  // Exact values, lists, nesting.
  {
    doc: 'patterns',
    section: 'Event patterns (EC2 instance-termination example)',
    name: 'all fields match',
    pattern: ec2Terminated,
    event: ec2Event,
    expected: true,
  },
  {
    doc: 'patterns',
    section: 'Event patterns (EC2 example, negative)',
    name: 'one field differs',
    pattern: ec2Terminated,
    event: { ...ec2Event, detail: { state: 'running' } },
    expected: false,
  },
  {
    doc: 'patterns',
    section: 'Create event patterns (event must contain every field)',
    name: 'field missing from event',
    pattern: ec2Terminated,
    event: { ...ec2Event, detail: {} },
    expected: false,
  },
  {
    doc: 'patterns',
    section: 'Create event patterns (exact, no case-folding)',
    name: 'case differs',
    pattern: { detail: { state: ['Terminated'] } },
    event: ec2Event,
    expected: false,
  },
  {
    doc: 'patterns',
    section: 'Create event patterns (fields not in the pattern are ignored)',
    name: 'extra event fields ignored',
    pattern: { source: ['aws.ec2'] },
    event: ec2Event,
    expected: true,
  },
  {
    doc: 'patterns',
    section: 'Match values (list is any of)',
    name: 'second list value matches',
    pattern: { source: ['aws.ec2', 'aws.fargate'] },
    event: { ...ec2Event, source: 'aws.fargate' },
    expected: true,
  },
  {
    doc: 'patterns',
    section: 'Match values (negative)',
    name: 'no list value matches',
    pattern: { source: ['aws.ec2', 'aws.fargate'] },
    event: { ...ec2Event, source: 'aws.s3' },
    expected: false,
  },
  {
    doc: 'patterns',
    section: 'Value matching (Macie risk score)',
    name: 'nested numbers match',
    pattern: {
      source: ['aws.macie'],
      'detail-type': ['Macie Alert'],
      detail: { 'risk-score': [80], trigger: { risk: [8] } },
    },
    event: macieEvent,
    expected: true,
  },
  {
    doc: 'patterns',
    section: 'Value matching (Macie, negative)',
    name: 'nested number differs',
    pattern: { detail: { trigger: { risk: [7] } } },
    event: macieEvent,
    expected: false,
  },
  {
    doc: 'patterns',
    section: 'Create event patterns (JSON types: numbers)',
    name: 'number does not match its string',
    pattern: { detail: { 'risk-score': ['80'] } },
    event: macieEvent,
    expected: false,
  },
  {
    doc: 'patterns',
    section: 'Create event patterns (JSON keywords true/false)',
    name: 'boolean true matches true',
    pattern: { flag: [true] },
    event: withField('flag', true),
    expected: true,
  },
  {
    doc: 'patterns',
    section: 'Create event patterns (JSON keywords true/false)',
    name: 'boolean does not match its string',
    pattern: { flag: [true] },
    event: withField('flag', 'true'),
    expected: false,
  },
  {
    doc: 'patterns',
    section: 'Field matching (responseElements null)',
    name: 'null field matches [null]',
    pattern: {
      source: ['aws.autoscaling'],
      'detail-type': ['EC2 Instance Launch Successful'],
      detail: { responseElements: [null] },
    },
    event: autoscalingEvent,
    expected: true,
  },
  {
    doc: 'patterns',
    section: 'Create event patterns (nested structure must match)',
    name: 'nested pattern against a scalar',
    pattern: { detail: { state: { name: ['running'] } } },
    event: ec2Event,
    expected: false,
  },

  // Null values and empty strings.
  {
    doc: 'nulls',
    section: 'empty string',
    name: '[""] matches ""',
    pattern: { detail: { eventVersion: [''] } },
    event: autoscalingEvent,
    expected: true,
  },
  {
    doc: 'nulls',
    section: 'null',
    name: '[null] matches null',
    pattern: { detail: { responseElements: [null] } },
    event: autoscalingEvent,
    expected: true,
  },
  {
    doc: 'nulls',
    section: 'Note: null and empty string are not interchangeable',
    name: '[""] does not match null',
    pattern: { detail: { responseElements: [''] } },
    event: autoscalingEvent,
    expected: false,
  },
  {
    doc: 'nulls',
    section: 'Note: null and empty string are not interchangeable',
    name: '[null] does not match ""',
    pattern: { detail: { eventVersion: [null] } },
    event: autoscalingEvent,
    expected: false,
  },
  {
    doc: 'nulls',
    section: 'null (negative)',
    name: '[null] does not match a missing field',
    pattern: { detail: { other: [null] } },
    event: autoscalingEvent,
    expected: false,
  },

  // Arrays.
  {
    doc: 'arrays',
    section: 'resources intersection',
    name: 'event array intersects pattern list',
    pattern: {
      resources: [
        'arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f',
        'arn:aws:ec2:us-east-1:111122223333:instance/i-b188560f',
        'arn:aws:ec2:us-east-1:444455556666:instance/i-b188560f',
      ],
    },
    event: {
      resources: [
        'arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:eb56d16b-bbf0-401d-b893-d5978ed4a025:autoScalingGroupName/ASGTerminate',
        'arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f',
      ],
    },
    expected: true,
  },
  {
    doc: 'arrays',
    section: 'resources intersection (negative)',
    name: 'empty intersection',
    pattern: { resources: ['arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f'] },
    event: { resources: ['arn:aws:ec2:us-east-1:123456789012:instance/i-other'] },
    expected: false,
  },
  {
    doc: 'arrays',
    section: 'resources intersection (negative)',
    name: 'empty event array',
    pattern: { resources: ['x'] },
    event: autoscalingEvent,
    expected: false,
  },
  {
    doc: 'patterns',
    section: 'Value matching (Macie tags array)',
    name: 'array element matches',
    pattern: { detail: { tags: ['Insider'] } },
    event: macieEvent,
    expected: true,
  },
  {
    doc: 'ruler',
    section: 'JSON Array Matching',
    name: 'field inside array of objects',
    pattern: { employees: { firstName: ['Anna'] } },
    event: {
      employees: [
        { firstName: 'John', lastName: 'Doe' },
        { firstName: 'Anna', lastName: 'Smith' },
        { firstName: 'Peter', lastName: 'Jones' },
      ],
    },
    expected: true,
  },
  {
    doc: 'ruler',
    section: 'JSON Array Matching (array-consistent)',
    name: 'fields from two different elements do not combine',
    pattern: { employees: { firstName: ['Anna'], lastName: ['Jones'] } },
    event: {
      employees: [
        { firstName: 'John', lastName: 'Doe' },
        { firstName: 'Anna', lastName: 'Smith' },
        { firstName: 'Peter', lastName: 'Jones' },
      ],
    },
    expected: false,
  },
  {
    doc: 'ruler',
    section: 'JSON Array Matching (array-consistent)',
    name: 'fields from one element combine',
    pattern: { employees: { firstName: ['Anna'], lastName: ['Smith'] } },
    event: { employees: [{ firstName: 'Anna', lastName: 'Smith' }] },
    expected: true,
  },
  {
    doc: 'ruler',
    section: 'JSON Array Matching (multi-level arrays)',
    name: 'nested arrays are crushed',
    pattern: { employees: { firstName: ['Peter'] } },
    event: { employees: [[{ firstName: 'John' }, { firstName: 'Anna' }], [{ firstName: 'Peter' }]] },
    expected: true,
  },

  // Prefix.
  {
    doc: 'filtering',
    section: 'Prefix matching',
    name: 'time starts with the prefix',
    pattern: { time: [{ prefix: '2017-10-02' }] },
    event: { time: '2017-10-02T18:43:48Z' },
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Prefix matching (negative)',
    name: 'time has another prefix',
    pattern: { time: [{ prefix: '2017-10-02' }] },
    event: { time: '2017-10-03T18:43:48Z' },
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'Prefix matching (string values only)',
    name: 'prefix never matches a number',
    pattern: { n: [{ prefix: '1' }] },
    event: { n: 123 },
    expected: false,
  },
  {
    doc: 'operators',
    section: 'Begins with',
    name: 'Region is in the US',
    pattern: { Region: [{ prefix: 'us-' }] },
    event: { Region: 'us-east-1' },
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Prefix matching while ignoring case',
    name: 'lower-case value',
    pattern: { detail: { service: [{ prefix: { 'equals-ignore-case': 'EventB' } }] } },
    event: { detail: { service: 'eventbridge' } },
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Prefix matching while ignoring case',
    name: 'upper-case value',
    pattern: { detail: { service: [{ prefix: { 'equals-ignore-case': 'EventB' } }] } },
    event: { detail: { service: 'EVENTBRIDGE' } },
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Prefix matching while ignoring case (negative)',
    name: 'other prefix',
    pattern: { detail: { service: [{ prefix: { 'equals-ignore-case': 'EventB' } }] } },
    event: { detail: { service: 'SNS' } },
    expected: false,
  },

  // Suffix.
  {
    doc: 'filtering',
    section: 'Suffix matching',
    name: '.png file',
    pattern: { FileName: [{ suffix: '.png' }] },
    event: { FileName: 'image.png' },
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Suffix matching (negative, case-sensitive)',
    name: '.PNG is not .png',
    pattern: { FileName: [{ suffix: '.png' }] },
    event: { FileName: 'image.PNG' },
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'Suffix matching while ignoring case',
    name: '.PNG matches',
    pattern: { detail: { FileName: [{ suffix: { 'equals-ignore-case': '.png' } }] } },
    event: { detail: { FileName: 'image.PNG' } },
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Suffix matching while ignoring case (negative)',
    name: '.jpg does not',
    pattern: { detail: { FileName: [{ suffix: { 'equals-ignore-case': '.png' } }] } },
    event: { detail: { FileName: 'image.jpg' } },
    expected: false,
  },

  // Equals-ignore-case.
  {
    doc: 'operators',
    section: 'Equals (ignore case)',
    name: 'ALICE matches alice',
    pattern: { Name: [{ 'equals-ignore-case': 'alice' }] },
    event: { Name: 'ALICE' },
    expected: true,
  },
  {
    doc: 'operators',
    section: 'Equals (ignore case), negative',
    name: 'alicia is not alice',
    pattern: { Name: [{ 'equals-ignore-case': 'alice' }] },
    event: { Name: 'alicia' },
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'Equals-ignore-case matching',
    name: 'detail-type in another case',
    pattern: { 'detail-type': [{ 'equals-ignore-case': 'ec2 instance state-change notification' }] },
    event: ec2Event,
    expected: true,
  },

  // Anything-but.
  {
    doc: 'filtering',
    section: 'Anything-but matching (string)',
    name: 'other state',
    pattern: { detail: { state: [{ 'anything-but': 'initializing' }] } },
    event: rulerEvent,
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Anything-but matching (string), negative',
    name: 'excluded state',
    pattern: { detail: { state: [{ 'anything-but': 'initializing' }] } },
    event: withDetail({ state: 'initializing' }),
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'Anything-but matching (field must be present)',
    name: 'missing field',
    pattern: { detail: { mode: [{ 'anything-but': 'initializing' }] } },
    event: rulerEvent,
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'Anything-but matching (number)',
    name: 'other number',
    pattern: { detail: { 'x-limit': [{ 'anything-but': 123 }] } },
    event: rulerEvent,
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Anything-but matching (number), negative',
    name: 'excluded number',
    pattern: { detail: { 'x-limit': [{ 'anything-but': 123 }] } },
    event: withDetail({ 'x-limit': 123 }),
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'Anything-but matching (list of strings)',
    name: 'not in list',
    pattern: { detail: { state: [{ 'anything-but': ['stopped', 'overloaded'] }] } },
    event: rulerEvent,
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Anything-but matching (list of strings), negative',
    name: 'in list',
    pattern: { detail: { state: [{ 'anything-but': ['stopped', 'overloaded'] }] } },
    event: withDetail({ state: 'overloaded' }),
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'Anything-but matching (list of numbers)',
    name: 'not in list',
    pattern: { detail: { 'x-limit': [{ 'anything-but': [100, 200, 300] }] } },
    event: rulerEvent,
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Anything-but matching (list of numbers), negative',
    name: 'in list',
    pattern: { detail: { 'x-limit': [{ 'anything-but': [100, 200, 300] }] } },
    event: withDetail({ 'x-limit': 200 }),
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'Anything-but matching (prefix)',
    name: 'no init prefix',
    pattern: { detail: { state: [{ 'anything-but': { prefix: 'init' } }] } },
    event: rulerEvent,
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Anything-but matching (prefix), negative',
    name: 'init prefix',
    pattern: { detail: { state: [{ 'anything-but': { prefix: 'init' } }] } },
    event: withDetail({ state: 'initializing' }),
    expected: false,
  },
  {
    doc: 'operators',
    section: 'Anything-but (ends with)',
    name: 'not a .png',
    pattern: { FileName: [{ 'anything-but': { suffix: '.png' } }] },
    event: { FileName: 'notes.txt' },
    expected: true,
  },
  {
    doc: 'operators',
    section: 'Anything-but (ends with), negative',
    name: 'a .png',
    pattern: { FileName: [{ 'anything-but': { suffix: '.png' } }] },
    event: { FileName: 'image.png' },
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'Anything-but matching (prefix list)',
    name: 'excluded by the second prefix',
    pattern: { Region: [{ 'anything-but': { prefix: ['us-', 'eu-'] } }] },
    event: { Region: 'eu-west-1' },
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'Anything-but matching (prefix list)',
    name: 'no listed prefix',
    pattern: { Region: [{ 'anything-but': { prefix: ['us-', 'eu-'] } }] },
    event: { Region: 'ap-south-1' },
    expected: true,
  },
  {
    doc: 'operators',
    section: 'Anything-but (ignore case)',
    name: 'INITIALIZING is excluded',
    pattern: { state: [{ 'anything-but': { 'equals-ignore-case': 'initializing' } }] },
    event: { state: 'INITIALIZING' },
    expected: false,
  },
  {
    doc: 'operators',
    section: 'Anything-but (ignore case)',
    name: 'running is not excluded',
    pattern: { state: [{ 'anything-but': { 'equals-ignore-case': 'initializing' } }] },
    event: { state: 'running' },
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Anything-but matching (ignore case, list)',
    name: 'Stopped is excluded by the list',
    pattern: { detail: { state: [{ 'anything-but': { 'equals-ignore-case': ['initializing', 'stopped'] } }] } },
    event: withDetail({ state: 'Stopped' }),
    expected: false,
  },
  {
    doc: 'operators',
    section: 'Anything-but using a wildcard',
    name: 'path without /lib/',
    pattern: { FilePath: [{ 'anything-but': { wildcard: '*/lib/*' } }] },
    event: { FilePath: '/usr/bin/env' },
    expected: true,
  },
  {
    doc: 'operators',
    section: 'Anything-but using a wildcard, negative',
    name: 'path with /lib/',
    pattern: { FilePath: [{ 'anything-but': { wildcard: '*/lib/*' } }] },
    event: { FilePath: '/usr/lib/libc.so' },
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'Anything-but matching (wildcard list)',
    name: 'excluded by second wildcard',
    pattern: { FilePath: [{ 'anything-but': { wildcard: ['*/lib/*', '*/bin/*'] } }] },
    event: { FilePath: '/usr/bin/env' },
    expected: false,
  },
  {
    doc: 'arrays',
    section: 'event array matches if any element matches (with anything-but)',
    name: 'one element not excluded',
    pattern: { state: [{ 'anything-but': 'initializing' }] },
    event: { state: ['initializing', 'running'] },
    expected: true,
  },

  // Numeric.
  {
    doc: 'filtering',
    section: 'Numeric matching',
    name: 'all three ranges hold',
    pattern: {
      detail: {
        'c-count': [{ numeric: ['>', 0, '<=', 5] }],
        'd-count': [{ numeric: ['<', 10] }],
        'x-limit': [{ numeric: ['=', 3.018e2] }],
      },
    },
    event: rulerEvent,
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Numeric matching (upper bound inclusive)',
    name: 'c-count 5 is <= 5',
    pattern: { detail: { 'c-count': [{ numeric: ['>', 0, '<=', 5] }] } },
    event: withDetail({ 'c-count': 5 }),
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Numeric matching, negative',
    name: 'c-count 6 is above the range',
    pattern: { detail: { 'c-count': [{ numeric: ['>', 0, '<=', 5] }] } },
    event: withDetail({ 'c-count': 6 }),
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'Numeric matching, negative (lower bound exclusive)',
    name: 'c-count 0 is not > 0',
    pattern: { detail: { 'c-count': [{ numeric: ['>', 0, '<=', 5] }] } },
    event: withDetail({ 'c-count': 0 }),
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'Numeric matching, negative',
    name: 'd-count 10 is not < 10',
    pattern: { detail: { 'd-count': [{ numeric: ['<', 10] }] } },
    event: withDetail({ 'd-count': 10 }),
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'Numeric matching, negative',
    name: 'x-limit 301.9 is not = 3.018e2',
    pattern: { detail: { 'x-limit': [{ numeric: ['=', 3.018e2] }] } },
    event: withDetail({ 'x-limit': 301.9 }),
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'Numeric matching (JSON numbers only)',
    name: 'a numeric string does not match',
    pattern: { detail: { 'c-count': [{ numeric: ['>', 0] }] } },
    event: withDetail({ 'c-count': '5' }),
    expected: false,
  },
  {
    doc: 'operators',
    section: 'Numeric (range)',
    name: 'price >= 10 and < 20, lower edge',
    pattern: { Price: [{ numeric: ['>=', 10, '<', 20] }] },
    event: { Price: 10 },
    expected: true,
  },
  {
    doc: 'operators',
    section: 'Numeric (range), negative',
    name: 'price at the exclusive upper edge',
    pattern: { Price: [{ numeric: ['>=', 10, '<', 20] }] },
    event: { Price: 20 },
    expected: false,
  },
  {
    doc: 'operators',
    section: 'Numeric (equals)',
    name: 'price = 100',
    pattern: { Price: [{ numeric: ['=', 100] }] },
    event: { Price: 100 },
    expected: true,
  },

  // IP address.
  {
    doc: 'filtering',
    section: 'IP address matching (IPv4)',
    name: 'inside 10.0.0.0/24',
    pattern: { detail: { sourceIPAddress: [{ cidr: '10.0.0.0/24' }] } },
    event: { detail: { sourceIPAddress: '10.0.0.255' } },
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'IP address matching (IPv4), negative',
    name: 'outside 10.0.0.0/24',
    pattern: { detail: { sourceIPAddress: [{ cidr: '10.0.0.0/24' }] } },
    event: { detail: { sourceIPAddress: '10.0.1.1' } },
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'IP address matching, negative',
    name: 'not an address',
    pattern: { detail: { sourceIPAddress: [{ cidr: '10.0.0.0/24' }] } },
    event: { detail: { sourceIPAddress: 'example.com' } },
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'IP address matching (IPv6)',
    name: 'inside 2001:db8::/32',
    pattern: { detail: { sourceIPAddress: [{ cidr: '2001:db8::/32' }] } },
    event: { detail: { sourceIPAddress: '2001:db8:1234::1' } },
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'IP address matching (IPv6), negative',
    name: 'outside 2001:db8::/32',
    pattern: { detail: { sourceIPAddress: [{ cidr: '2001:db8::/32' }] } },
    event: { detail: { sourceIPAddress: '2001:db9::1' } },
    expected: false,
  },
  {
    doc: 'ruler',
    section: 'IP Address Matching (exact IP values compare as addresses)',
    name: 'IPv6 spelled differently',
    pattern: { ip: ['2001:db8::1'] },
    event: { ip: '2001:0db8:0:0:0:0:0:1' },
    expected: true,
  },
  {
    doc: 'ruler',
    section: 'IP Address Matching (exact IP values), negative',
    name: 'another address',
    pattern: { ip: ['2001:db8::1'] },
    event: { ip: '2001:db8::2' },
    expected: false,
  },
  {
    doc: 'ruler',
    section: 'IP Address Matching',
    name: 'source-ip in 10.0.0.0/8',
    pattern: { detail: { 'source-ip': [{ cidr: '10.0.0.0/8' }] } },
    event: rulerEvent,
    expected: true,
  },

  // Exists.
  {
    doc: 'filtering',
    section: 'Exists matching (true)',
    name: 'field present',
    pattern: { detail: { 'c-count': [{ exists: true }] } },
    event: rulerEvent,
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Exists matching (true), negative',
    name: 'field absent',
    pattern: { detail: { 'e-count': [{ exists: true }] } },
    event: rulerEvent,
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'Exists matching (false)',
    name: 'field absent',
    pattern: { detail: { 'c-count': [{ exists: false }] } },
    event: {
      'detail-type': ['EC2 Instance State-change Notification'],
      detail: { state: ['initializing', 'running'] },
    },
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Exists matching (false), negative',
    name: 'field present',
    pattern: { detail: { 'c-count': [{ exists: false }] } },
    event: rulerEvent,
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'Exists matching (leaf nodes only)',
    name: 'exists:false matches when c-count is an object',
    pattern: { detail: { 'c-count': [{ exists: false }] } },
    event: { detail: { state: ['initializing', 'running'], 'c-count': { c1: 100 } } },
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Exists matching (leaf nodes only), negative',
    name: 'exists:true does not match an object',
    pattern: { detail: { 'c-count': [{ exists: true }] } },
    event: { detail: { 'c-count': { c1: 100 } } },
    expected: false,
  },
  {
    doc: 'filtering',
    section: 'Exists matching (false, no parent)',
    name: 'whole detail missing',
    pattern: { detail: { 'c-count': [{ exists: false }] } },
    event: { source: 'x' },
    expected: true,
  },
  {
    doc: 'operators',
    section: 'Exists / Does not exist (nested object path)',
    name: 'nested leaf present',
    pattern: { detail: { trigger: { risk: [{ exists: true }] } } },
    event: macieEvent,
    expected: true,
  },

  // Wildcard.
  {
    doc: 'filtering',
    section: 'Wildcard matching',
    name: 'event bus ARN in any account',
    pattern: { EventBusArn: [{ wildcard: 'arn:aws:events:us-east-1:*:event-bus/*' }] },
    event: { EventBusArn: 'arn:aws:events:us-east-1:123456789012:event-bus/default' },
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Wildcard matching, negative',
    name: 'other region',
    pattern: { EventBusArn: [{ wildcard: 'arn:aws:events:us-east-1:*:event-bus/*' }] },
    event: { EventBusArn: 'arn:aws:events:us-west-2:123456789012:event-bus/default' },
    expected: false,
  },
  {
    doc: 'operators',
    section: 'Wildcard',
    name: 'dir/*.png',
    pattern: { FileName: [{ wildcard: 'dir/*.png' }] },
    event: { FileName: 'dir/a/b.png' },
    expected: true,
  },
  {
    doc: 'operators',
    section: 'Wildcard, negative',
    name: 'dir/*.png vs .jpg',
    pattern: { FileName: [{ wildcard: 'dir/*.png' }] },
    event: { FileName: 'dir/a.jpg' },
    expected: false,
  },
  {
    doc: 'ruler',
    section: 'Wildcard matching',
    name: '* matches zero characters',
    pattern: { source: [{ wildcard: 'Simple*Service' }] },
    event: { source: 'SimpleService' },
    expected: true,
  },
  {
    doc: 'ruler',
    section: 'Wildcard matching (case-sensitive), negative',
    name: 'case differs',
    pattern: { source: [{ wildcard: 'Simple*Service' }] },
    event: { source: 'simpleQueueService' },
    expected: false,
  },
  {
    doc: 'ruler',
    section: 'Wildcard matching (escaped asterisk)',
    name: '\\* is a literal *',
    pattern: { v: [{ wildcard: 'a\\*b' }] },
    event: { v: 'a*b' },
    expected: true,
  },
  {
    doc: 'ruler',
    section: 'Wildcard matching (escaped asterisk), negative',
    name: '\\* does not match other characters',
    pattern: { v: [{ wildcard: 'a\\*b' }] },
    event: { v: 'aXb' },
    expected: false,
  },
  {
    doc: 'ruler',
    section: 'Wildcard matching (escaped backslash)',
    name: '\\\\ is a literal backslash',
    pattern: { v: [{ wildcard: 'a\\\\*' }] },
    event: { v: 'a\\tail' },
    expected: true,
  },

  // $or.
  {
    doc: 'filtering',
    section: '$or matching (metricName)',
    name: 'first alternative',
    pattern: {
      source: ['aws.cloudwatch'],
      $or: [{ metricName: ['CPUUtilization', 'ReadLatency'] }, { namespace: ['AWS/EC2', 'AWS/ES'] }],
    },
    event: { source: 'aws.cloudwatch', metricName: 'CPUUtilization' },
    expected: true,
  },
  {
    doc: 'filtering',
    section: '$or matching (namespace)',
    name: 'second alternative',
    pattern: {
      source: ['aws.cloudwatch'],
      $or: [{ metricName: ['CPUUtilization', 'ReadLatency'] }, { namespace: ['AWS/EC2', 'AWS/ES'] }],
    },
    event: { source: 'aws.cloudwatch', namespace: 'AWS/ES' },
    expected: true,
  },
  {
    doc: 'filtering',
    section: '$or matching, negative',
    name: 'no alternative',
    pattern: {
      source: ['aws.cloudwatch'],
      $or: [{ metricName: ['CPUUtilization', 'ReadLatency'] }, { namespace: ['AWS/EC2', 'AWS/ES'] }],
    },
    event: { source: 'aws.cloudwatch', namespace: 'AWS/S3' },
    expected: false,
  },
  {
    doc: 'filtering',
    section: '$or matching, negative (and still applies)',
    name: 'alternative holds, source does not',
    pattern: { source: ['aws.cloudwatch'], $or: [{ metricName: ['CPUUtilization'] }, { namespace: ['AWS/EC2'] }] },
    event: { source: 'aws.ec2', metricName: 'CPUUtilization' },
    expected: false,
  },
  {
    doc: 'filtering',
    section: '$or matching (numeric alternatives in detail)',
    name: 'only x-limit holds',
    pattern: {
      detail: {
        $or: [
          { 'c-count': [{ numeric: ['>', 0, '<=', 5] }] },
          { 'd-count': [{ numeric: ['<', 10] }] },
          { 'x-limit': [{ numeric: ['=', 3.018e2] }] },
        ],
      },
    },
    event: withDetail({ 'c-count': 9, 'd-count': 99 }),
    expected: true,
  },
  {
    doc: 'filtering',
    section: '$or matching (numeric alternatives in detail), negative',
    name: 'none holds',
    pattern: {
      detail: { $or: [{ 'c-count': [{ numeric: ['>', 0, '<=', 5] }] }, { 'd-count': [{ numeric: ['<', 10] }] }] },
    },
    event: withDetail({ 'c-count': 9, 'd-count': 99 }),
    expected: false,
  },
  {
    doc: 'ruler',
    section: '"Or" has an "And" inside',
    name: 'second alternative needs both fields',
    pattern: {
      source: ['aws.cloudwatch'],
      $or: [
        { metricName: ['CPUUtilization'] },
        { metricType: ['MetricType'], namespace: ['AWS/EC2', 'AWS/ES'] },
        { scope: ['Service'] },
      ],
    },
    event: { source: 'aws.cloudwatch', metricType: 'MetricType' },
    expected: false,
  },
  {
    doc: 'ruler',
    section: 'Nested "Or" and "And"',
    name: 'inner $or inside an alternative',
    pattern: {
      source: ['aws.cloudwatch'],
      $or: [
        { metricName: ['CPUUtilization'] },
        { metricType: ['MetricType'], namespace: ['AWS/EC2'], $or: [{ metricId: [1234] }, { spaceId: [1000] }] },
      ],
    },
    event: { source: 'aws.cloudwatch', metricType: 'MetricType', namespace: 'AWS/EC2', spaceId: 1000 },
    expected: true,
  },
  {
    doc: 'ruler',
    section: 'Parallel "Or"',
    name: 'both $or groups must hold',
    pattern: {
      $or: [{ metricName: ['CPUUtilization'] }, { namespace: ['AWS/EC2'] }],
      detail: { $or: [{ source: ['aws.cloudwatch'] }, { 'detail-type': ['CloudWatch Alarm State Change'] }] },
    },
    event: { namespace: 'AWS/EC2', detail: { source: 'other' } },
    expected: false,
  },

  // Combined.
  {
    doc: 'filtering',
    section: 'Complex example with multiple matching',
    name: 'all conditions hold',
    pattern: {
      time: [{ prefix: '2017-10-02' }],
      detail: {
        state: [{ 'anything-but': 'initializing' }],
        'c-count': [{ numeric: ['>', 0, '<=', 5] }],
        'd-count': [{ numeric: ['<', 10] }],
        'x-limit': [{ 'anything-but': [100, 200, 300] }],
      },
    },
    event: rulerEvent,
    expected: true,
  },
  {
    doc: 'filtering',
    section: 'Complex example with multiple matching, negative',
    name: 'one condition fails',
    pattern: {
      time: [{ prefix: '2017-10-02' }],
      detail: { state: [{ 'anything-but': 'initializing' }], 'c-count': [{ numeric: ['>', 0, '<=', 5] }] },
    },
    event: withDetail({ state: 'initializing' }),
    expected: false,
  },
  {
    doc: 'patterns',
    section: 'Match values (exact values and operators mixed in one list)',
    name: 'operator alternative in the list',
    pattern: { source: ['aws.s3', { prefix: 'aws.e' }] },
    event: ec2Event,
    expected: true,
  },
];

describe('event pattern matching (EventBridge documentation cases)', () => {
  it.each(cases.map((c) => [`${c.section}: ${c.name}`, c] as const))('%s', (_title, c) => {
    expect(matches(compilePattern(c.pattern), c.event), `${DOCS[c.doc]} — ${c.section}`).toBe(c.expected);
  });

  it('covers every operator with positive and negative cases', () => {
    const ops = [
      'prefix',
      'suffix',
      'equals-ignore-case',
      'anything-but',
      'numeric',
      'exists',
      'wildcard',
      'cidr',
      '$or',
    ];
    for (const op of ops) {
      const withOp = cases.filter((c) => JSON.stringify(c.pattern).includes(`"${op}"`));
      expect(
        withOp.some((c) => c.expected),
        `${op} positive`,
      ).toBe(true);
      expect(
        withOp.some((c) => !c.expected),
        `${op} negative`,
      ).toBe(true);
    }
  });

  it('accepts the pattern as JSON text, as the EventBridge API does', () => {
    expect(matches(compilePattern(JSON.stringify(ec2Terminated)), ec2Event)).toBe(true);
  });

  it('does not match non-object events', () => {
    const compiled = compilePattern({ source: ['aws.ec2'] });
    expect(matches(compiled, null)).toBe(false);
    expect(matches(compiled, 'aws.ec2')).toBe(false);
    expect(matches(compiled, [ec2Event])).toBe(false);
  });

  it('matches a hostile wildcard in linear time', () => {
    const compiled = compilePattern({ v: [{ wildcard: `${'a*'.repeat(50)}b` }] });
    const started = performance.now();
    expect(matches(compiled, { v: 'a'.repeat(20_000) })).toBe(false);
    expect(performance.now() - started).toBeLessThan(500);
  });
});

interface InvalidCase {
  rule: string;
  pattern: unknown;
  path: string;
  reason: RegExp;
}

// What EventBridge refuses (PutRule / TestEventPattern "Event pattern is not valid"), from the documented
// value shapes of each operator and Event Ruler's rule compiler.
const invalid: InvalidCase[] = [
  { rule: 'a pattern is a JSON object', pattern: ['aws.ec2'], path: '', reason: /JSON object/ },
  { rule: 'a pattern is a JSON object', pattern: null, path: '', reason: /JSON object/ },
  { rule: 'a pattern is JSON', pattern: '{"source": [', path: '', reason: /not valid JSON/ },
  { rule: 'empty objects are not allowed', pattern: {}, path: '', reason: /empty objects/ },
  { rule: 'empty objects are not allowed (nested)', pattern: { detail: {} }, path: 'detail', reason: /empty objects/ },
  { rule: 'match values are arrays', pattern: { source: 'aws.ec2' }, path: 'source', reason: /must be in an array/ },
  {
    rule: 'match values are arrays',
    pattern: { detail: { 'risk-score': 80 } },
    path: 'detail.risk-score',
    reason: /must be in an array/,
  },
  { rule: 'empty arrays are not allowed', pattern: { source: [] }, path: 'source', reason: /empty arrays/ },
  { rule: 'no nested arrays', pattern: { source: [['aws.ec2']] }, path: 'source[0]', reason: /nested arrays/ },
  {
    rule: 'one operator per match object',
    pattern: { v: [{ prefix: 'a', suffix: 'b' }] },
    path: 'v[0]',
    reason: /exactly one operator/,
  },
  { rule: 'one operator per match object', pattern: { v: [{}] }, path: 'v[0]', reason: /empty match object/ },
  {
    rule: 'unknown operators',
    pattern: { v: [{ contains: 'x' }] },
    path: 'v[0]',
    reason: /unrecognized match type "contains"/,
  },
  {
    rule: 'prefix takes a string',
    pattern: { v: [{ prefix: 1 }] },
    path: 'v[0].prefix',
    reason: /prefix takes a string/,
  },
  {
    rule: 'prefix ignore-case takes a string',
    pattern: { v: [{ prefix: { 'equals-ignore-case': 5 } }] },
    path: 'v[0].prefix',
    reason: /equals-ignore-case/,
  },
  {
    rule: 'suffix takes a string',
    pattern: { v: [{ suffix: ['a'] }] },
    path: 'v[0].suffix',
    reason: /suffix takes a string/,
  },
  {
    rule: 'equals-ignore-case takes a string',
    pattern: { v: [{ 'equals-ignore-case': 5 }] },
    path: 'v[0].equals-ignore-case',
    reason: /takes a string/,
  },
  { rule: 'numeric takes an array', pattern: { v: [{ numeric: 5 }] }, path: 'v[0].numeric', reason: /takes an array/ },
  { rule: 'numeric pairs', pattern: { v: [{ numeric: ['>'] }] }, path: 'v[0].numeric', reason: /pairs/ },
  {
    rule: 'numeric operators',
    pattern: { v: [{ numeric: ['!=', 1] }] },
    path: 'v[0].numeric[0]',
    reason: /unrecognized numeric operator/,
  },
  {
    rule: 'numeric values are numbers',
    pattern: { v: [{ numeric: ['>', '1'] }] },
    path: 'v[0].numeric[1]',
    reason: /must be a number/,
  },
  { rule: 'numeric range limit', pattern: { v: [{ numeric: ['>', 6e9] }] }, path: 'v[0].numeric[1]', reason: /5.0e9/ },
  {
    rule: '= stands alone',
    pattern: { v: [{ numeric: ['=', 1, '<', 2] }] },
    path: 'v[0].numeric[0]',
    reason: /cannot be combined/,
  },
  {
    rule: 'one lower bound',
    pattern: { v: [{ numeric: ['>', 1, '>=', 2] }] },
    path: 'v[0].numeric[2]',
    reason: /one lower bound/,
  },
  {
    rule: 'one upper bound',
    pattern: { v: [{ numeric: ['<', 1, '<=', 2] }] },
    path: 'v[0].numeric[2]',
    reason: /one upper bound/,
  },
  {
    rule: 'lower bound first',
    pattern: { v: [{ numeric: ['<', 5, '>', 1] }] },
    path: 'v[0].numeric[2]',
    reason: /lower bound \(> or >=\) first/,
  },
  {
    rule: 'bounds in order',
    pattern: { v: [{ numeric: ['>', 5, '<', 1] }] },
    path: 'v[0].numeric',
    reason: /less than the upper bound/,
  },
  { rule: 'exists is a boolean', pattern: { v: [{ exists: 'yes' }] }, path: 'v[0].exists', reason: /true or false/ },
  {
    rule: 'anything-but cannot nest',
    pattern: { v: [{ 'anything-but': { 'anything-but': 'x' } }] },
    path: 'v[0].anything-but.anything-but',
    reason: /cannot be nested/,
  },
  {
    rule: 'anything-but list of one type',
    pattern: { v: [{ 'anything-but': ['a', 1] }] },
    path: 'v[0].anything-but',
    reason: /only strings or only numbers/,
  },
  {
    rule: 'anything-but no null or boolean',
    pattern: { v: [{ 'anything-but': [true] }] },
    path: 'v[0].anything-but',
    reason: /only strings or only numbers/,
  },
  {
    rule: 'anything-but no null',
    pattern: { v: [{ 'anything-but': null }] },
    path: 'v[0].anything-but',
    reason: /anything-but takes/,
  },
  {
    rule: 'anything-but list not empty',
    pattern: { v: [{ 'anything-but': [] }] },
    path: 'v[0].anything-but',
    reason: /must not be empty/,
  },
  {
    rule: 'anything-but supported operators only',
    pattern: { v: [{ 'anything-but': { numeric: ['>', 1] } }] },
    path: 'v[0].anything-but.numeric',
    reason: /not supported inside anything-but/,
  },
  {
    rule: 'anything-but one operator',
    pattern: { v: [{ 'anything-but': { prefix: 'a', suffix: 'b' } }] },
    path: 'v[0].anything-but',
    reason: /exactly one operator/,
  },
  {
    rule: 'anything-but prefix is a string',
    pattern: { v: [{ 'anything-but': { prefix: 5 } }] },
    path: 'v[0].anything-but.prefix',
    reason: /a string or a non-empty list of strings/,
  },
  {
    rule: 'anything-but prefix not empty',
    pattern: { v: [{ 'anything-but': { prefix: '' } }] },
    path: 'v[0].anything-but.prefix',
    reason: /must not be empty strings/,
  },
  {
    rule: 'anything-but suffix list of strings',
    pattern: { v: [{ 'anything-but': { suffix: ['.png', 1] } }] },
    path: 'v[0].anything-but.suffix',
    reason: /list of strings/,
  },
  {
    rule: 'anything-but wildcard is valid',
    pattern: { v: [{ 'anything-but': { wildcard: ['ok*', 'a**'] } }] },
    path: 'v[0].anything-but.wildcard[1]',
    reason: /consecutive wildcard/,
  },
  {
    rule: 'wildcard: consecutive * rejected',
    pattern: { v: [{ wildcard: 'a**b' }] },
    path: 'v[0].wildcard',
    reason: /consecutive wildcard characters/,
  },
  {
    rule: 'wildcard: only \\* and \\\\ escapes',
    pattern: { v: [{ wildcard: 'a\\b' }] },
    path: 'v[0].wildcard',
    reason: /backslash/,
  },
  {
    rule: 'wildcard: trailing backslash',
    pattern: { v: [{ wildcard: 'a\\' }] },
    path: 'v[0].wildcard',
    reason: /backslash/,
  },
  {
    rule: 'wildcard takes a string',
    pattern: { v: [{ wildcard: 1 }] },
    path: 'v[0].wildcard',
    reason: /takes a string/,
  },
  {
    rule: 'cidr needs a prefix length',
    pattern: { v: [{ cidr: '10.0.0.1' }] },
    path: 'v[0].cidr',
    reason: /not a CIDR block/,
  },
  { rule: 'cidr IPv4 mask bits < 32', pattern: { v: [{ cidr: '10.0.0.0/33' }] }, path: 'v[0].cidr', reason: /0 to 31/ },
  {
    rule: 'cidr IPv4 mask bits < 32 (a single address is a plain value)',
    pattern: { v: [{ cidr: '10.0.0.1/32' }] },
    path: 'v[0].cidr',
    reason: /0 to 31/,
  },
  {
    rule: 'cidr IPv6 mask bits < 128',
    pattern: { v: [{ cidr: '2001:db8::/128' }] },
    path: 'v[0].cidr',
    reason: /0 to 127/,
  },
  {
    rule: 'cidr mask bits are a number',
    pattern: { v: [{ cidr: '10.0.0.0/x' }] },
    path: 'v[0].cidr',
    reason: /whole number/,
  },
  {
    rule: 'cidr address valid',
    pattern: { v: [{ cidr: '10.0.0.300/24' }] },
    path: 'v[0].cidr',
    reason: /not an IPv4 or IPv6 address/,
  },
  { rule: '$or needs two alternatives', pattern: { $or: [{ a: ['x'] }] }, path: '$or', reason: /at least 2/ },
  { rule: '$or is an array', pattern: { $or: { a: ['x'] } }, path: '$or', reason: /at least 2/ },
  {
    rule: '$or alternatives are objects',
    pattern: { $or: [{ a: ['x'] }, 'b'] },
    path: '$or[1]',
    reason: /pattern object/,
  },
  {
    rule: '$or alternatives are not empty',
    pattern: { detail: { $or: [{ a: ['x'] }, {}] } },
    path: 'detail.$or[1]',
    reason: /empty objects/,
  },
  {
    rule: 'operator names are reserved inside $or',
    pattern: { $or: [{ numeric: ['x'] }, { prefix: ['y'] }] },
    path: '$or[0].numeric',
    reason: /reserved operator name/,
  },
  {
    rule: 'errors inside $or name the path',
    pattern: { $or: [{ a: ['x'] }, { b: [{ numeric: ['>', 'x'] }] }] },
    path: '$or[1].b[0].numeric[1]',
    reason: /must be a number/,
  },
];

describe('invalid event patterns', () => {
  it.each(invalid.map((c) => [c.rule, c] as const))('%s', (_rule, c) => {
    let error: unknown;
    try {
      compilePattern(c.pattern);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidPatternError);
    const e = error as InvalidPatternError;
    expect(e.path).toBe(c.path);
    expect(e.message).toMatch(c.reason);
    if (c.path) expect(e.message).toContain(c.path);
  });
});
