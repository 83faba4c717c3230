import { Readable } from 'node:stream';
import { ChunkReader } from './chunks';

describe('ChunkReader', () => {
  const pieces = (...sizes: number[]) => {
    let v = 0;
    return Readable.from(sizes.map((n) => Buffer.from(Array.from({ length: n }, () => v++ & 0xff))));
  };

  it('cuts a stream into chunks of the size asked, whatever the pieces, and says which is last', async () => {
    const reader = new ChunkReader(pieces(3, 5, 1, 7));
    const got: Array<[number[], boolean]> = [];
    for (;;) {
      const { chunk, last } = await reader.next(4);
      got.push([[...chunk], last]);
      if (last) break;
    }
    expect(got).toEqual([
      [[0, 1, 2, 3], false],
      [[4, 5, 6, 7], false],
      [[8, 9, 10, 11], false],
      [[12, 13, 14, 15], true],
    ]);
  });

  it('reports an empty stream as one empty last chunk, and a short one as last at once', async () => {
    const empty = await new ChunkReader(Readable.from([])).next(10);
    expect({ length: empty.chunk.length, last: empty.last }).toEqual({ length: 0, last: true });
    const short = await new ChunkReader(pieces(3)).next(10);
    expect({ bytes: [...short.chunk], length: short.chunk.length, last: short.last }).toEqual({ bytes: [0, 1, 2], length: 3, last: true });
  });

  it('copies every chunk into one buffer allocated once at the capacity asked for, letting the pieces go', async () => {
    const reader = new ChunkReader(pieces(5, 9, 2), 8);
    const first = await reader.next(5);
    const second = await reader.next(8);
    const third = await reader.next(8);
    expect([first.chunk.length, second.chunk.length, third.chunk.length, third.last]).toEqual([5, 8, 3, true]);
    // The same memory each time: the first (smaller) read did not leave a buffer of its own behind.
    expect(second.chunk.buffer).toBe(first.chunk.buffer);
    expect(third.chunk.buffer).toBe(first.chunk.buffer);
    expect(first.chunk.buffer.byteLength).toBe(8);
    expect([...third.chunk]).toEqual([13, 14, 15]);
  });

  it('turns a failing client stream into a 400 on content', async () => {
    const failing = new Readable({ read() { this.destroy(new Error('client went away')); } });
    await expect(new ChunkReader(failing).next(10)).rejects.toMatchObject({ kind: 'invalid_argument', details: { parameter: 'content' } });
  });
});
