/** A bad command line: main prints it with the usage text and exits 2. Its own module, free of imports. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
