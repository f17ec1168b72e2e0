// Stream event ids (api/stream/cursor.ts): positions in the stream topics, written and read back.
import { expect } from 'chai';
import { decode, encode, later, notAhead } from '../../api/stream/cursor.ts';

describe('stream event ids', () => {
  const layout = { partitions: [3, 1, 1, 1] };

  it('read back the position they were written from', () => {
    const position = [0, 35, 1_000_000_007, 4, 0, 2 ** 40];
    const id = encode(layout, position);
    expect(id).to.match(/^1:3-1-1-1:/);
    expect(decode(layout, id)).to.deep.equal({ kind: 'ok', position });
  });

  it('tell an id of another layout from text that is no id', () => {
    expect(decode(layout, encode({ partitions: [3, 1, 1] }, [1, 2, 3, 4, 5]))).to.deep.equal({ kind: 'other-layout' });
    for (const text of ['', '12', '1:3-1-1-1:1.2', '2:3-1-1-1:0.0.0.0.0.0', '1:3-1-1-1:0.0.0.0.0.-1', '1:3-1-1-1:0.0.0.0.0.zzzzzzzzzzzzz', '1:3-1-1-1:0.0.0.0.0.0\nevent: x']) {
      expect(decode(layout, text), JSON.stringify(text)).to.deep.equal({ kind: 'invalid' });
    }
  });

  it('compare and merge positions partition by partition', () => {
    expect(later([1, 5, 0], [2, 3, 0])).to.deep.equal([2, 5, 0]);
    expect(notAhead([1, 3], [1, 4])).to.equal(true);
    expect(notAhead([2, 3], [1, 4])).to.equal(false);
  });
});
