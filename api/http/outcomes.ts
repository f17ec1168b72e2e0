// A domain command's outcome as the API answers it (domain/outcome.ts): the value, or the
// refusal in the specification's error shapes.
import type { Outcome, Refusal } from '../../domain/outcome.ts';
import { badRequest, forbidden, messageError, notFound, type HttpError } from './errors.ts';

export function errorOf(r: Refusal): HttpError {
  switch (r.kind) {
    case 'unknown':
      return notFound();
    case 'forbidden':
      return forbidden(r.message);
    case 'state':
      return messageError(r.message);
    case 'fields':
      return badRequest(r.fields);
  }
}

/** The outcome's value; its refusal thrown as the answer. */
export function valueOf<T>(o: Outcome<T>): T {
  if (!o.ok) throw errorOf(o.refusal);
  return o.value;
}
