/** Wrong invocation: exit 2 with the usage text. */
export class UsageError extends Error {}

/** A failure to report in one line: exit 1. */
export class CliError extends Error {}
