// The request body's parser, run by every operation after its authentication
// (api/http/contract.ts): a caller without a valid token gets 401 whatever it sent
// (specification 5.4), and a body is read only for a caller who may send one.
import { koaBody } from 'koa-body';
import { badRequest, payloadTooLarge } from './errors.ts';

export const requestBody = koaBody({
  json: true,
  urlencoded: true,
  multipart: true,
  jsonLimit: '20mb',
  // Any JSON value parses, so each endpoint answers a body of the wrong shape in its own
  // words (the reported-metrics push: `{message}` for anything but a non-empty list).
  jsonStrict: false,
  formLimit: '1mb',
  // A malformed body is the client's fault: 400, not 500; one over the limits, 413.
  onError: (err) => {
    if ((err as { status?: number }).status === 413) throw payloadTooLarge();
    throw badRequest({ non_field_errors: [`Malformed request body: ${err.message}`] });
  },
});
