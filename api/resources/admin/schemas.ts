import { compile } from '../../http/validate.ts';

export interface MinutesQuery {
  exchange: string;
  pair: string;
  time_start?: string;
  time_end?: string;
}

export const minutesQuery = compile<MinutesQuery>({
  type: 'object',
  required: ['exchange', 'pair'],
  properties: {
    exchange: { type: 'string', minLength: 1, maxLength: 100 },
    pair: { type: 'string', minLength: 1, maxLength: 100 },
    time_start: { type: 'string', format: 'date-time' },
    time_end: { type: 'string', format: 'date-time' },
  },
});
