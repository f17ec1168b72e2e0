// What a domain command answers: its value, or why it was refused, in the domain's words.
// The API turns a refusal into the specification's error shapes (api/http/outcomes.ts):
// unknown 404, forbidden 403, state 400 `{message}`, fields 400 `{field: [...]}`.

/** Messages by field; nested objects and lists for nested fields (`{loan: {tranches: [{}, {...}]}}`). */
export type FieldErrors = { [field: string]: string[] | string | FieldErrors | FieldErrors[] };

export type Refusal =
  /** Absent, or not visible to the caller: the two read alike, so existence does not leak. */
  | { kind: 'unknown' }
  /** Visible, but not the caller's to change. */
  | { kind: 'forbidden'; message?: string }
  /** The record's state does not allow it (the message names the state). */
  | { kind: 'state'; message: string }
  /** The input, read against the reference data and the record. */
  | { kind: 'fields'; fields: FieldErrors };

export type Outcome<T> = { ok: true; value: T } | { ok: false; refusal: Refusal };

/** Thrown inside a command (also from inside a lock) and turned into its outcome by `decide`. */
class Refused extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.kind);
    this.name = 'Refused';
  }
}

export const refuse = {
  unknown: (): never => {
    throw new Refused({ kind: 'unknown' });
  },
  forbidden: (message?: string): never => {
    throw new Refused(message === undefined ? { kind: 'forbidden' } : { kind: 'forbidden', message });
  },
  state: (message: string): never => {
    throw new Refused({ kind: 'state', message });
  },
  fields: (fields: FieldErrors): never => {
    throw new Refused({ kind: 'fields', fields });
  },
};

/** Runs a command's steps; a refusal anywhere in them is its outcome, and nothing after it is written. */
export async function decide<T>(steps: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await steps() };
  } catch (e) {
    if (e instanceof Refused) return { ok: false, refusal: e.refusal };
    throw e;
  }
}

/** A checked input: its value or its field errors. */
export type Checked<T> = { value: T; errors?: undefined } | { errors: FieldErrors; value?: undefined };
