// Every message ends in exactly one outcome; nothing is thrown out of a step for bad input.
export type Outcome<T> =
  | { kind: 'ok'; value: T }
  /** Bad input: goes to the topic's .dlq with the reason. */
  | { kind: 'dead-letter'; reason: string }
  /** Well-formed but carries nothing to store (e.g. a crossed book): counted, not written. */
  | { kind: 'skip'; reason: string };

export const ok = <T>(value: T): Outcome<T> => ({ kind: 'ok', value });
export const deadLetter = (reason: string): { kind: 'dead-letter'; reason: string } => ({ kind: 'dead-letter', reason });
export const skip = (reason: string): { kind: 'skip'; reason: string } => ({ kind: 'skip', reason });
