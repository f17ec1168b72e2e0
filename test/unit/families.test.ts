// The Node-side merge of partials against its definition (the DDL and the SQL merge are
// held to the families in test/domain/families.test.ts, against ClickHouse).
import { expect } from 'chai';
import { mergePartials } from '../../domain/market/families/family.ts';
import { FAMILIES, type BookPartial, type DerivativePartial } from '../../domain/market/families/index.ts';

describe('metric families: the merge in Node', () => {
  it('merges partials in Node as the SQL does: sums, element-wise sums, earliest and latest tuples, minima skipping null', async () => {
    const key = { exchange: 'x', pair: 'A/B', b: 0 };
    const a: BookPartial = { ...key, minutes: 2, samples: 10, mid_sum: 3, first: [1000, 5], last: [2000, 6], tick_min: null, depth_minutes: 2, bid_depth_sum: [1, 2], ask_depth_sum: [1], bid_count_sum: [1, 1], ask_count_sum: [0, 0] };
    const b: BookPartial = { ...key, minutes: 1, samples: 4, mid_sum: 1.5, first: [1000, 4], last: [3000, 7], tick_min: 0.5, depth_minutes: 0, bid_depth_sum: [1, 1, 1], ask_depth_sum: [2], bid_count_sum: [2, 2], ask_count_sum: [1, 1] };
    expect(mergePartials(FAMILIES.book, a, b)).to.deep.equal({
      ...key,
      minutes: 3,
      samples: 14,
      mid_sum: 4.5,
      first: [1000, 4], // the same time: the smaller value, as min() of tuples
      last: [3000, 7],
      tick_min: 0.5,
      depth_minutes: 2,
      bid_depth_sum: [2, 3, 1],
      ask_depth_sum: [3],
      bid_count_sum: [3, 3],
      ask_count_sum: [1, 1],
    });
    expect(mergePartials(FAMILIES.book, a, undefined)).to.equal(a);
    const d1: DerivativePartial = { ...key, funding: [5000, 0.1], open_interest: [0, 0] };
    const d2: DerivativePartial = { ...key, funding: [4000, 0.3], open_interest: [4000, 9] };
    expect(mergePartials(FAMILIES.derivative, d1, d2)).to.deep.equal({ ...key, funding: [5000, 0.1], open_interest: [4000, 9] });
  });

});
