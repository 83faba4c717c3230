import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { ChunkLender } from '@gateway/content-transport';

/**
 * Reads a lending stream the way a careful consumer does, and checks the lending contract on the way:
 * each chunk is hashed and handed back three chunks later (so reads land while it is held), handed back
 * twice (the second must do nothing), then scribbled over (a chunk still held must keep its bytes).
 * Returns what arrived and in how many distinct memories (ArrayBuffers) it came.
 */
export async function readHandingBack(stream: Readable): Promise<{ received: number; sha256: string; memories: number }> {
  const lender = stream as Readable & ChunkLender;
  if (typeof lender.returnChunk !== 'function') throw new Error('the stream does not lend its chunks');
  const hash = createHash('sha256');
  const held: Buffer[] = [];
  const memories = new Set<ArrayBufferLike>();
  let received = 0;
  for await (const data of stream) {
    const chunk = data as Buffer;
    received += chunk.length;
    memories.add(chunk.buffer);
    held.push(chunk);
    if (held.length > 3) {
      const done = held.shift() as Buffer;
      hash.update(done);
      lender.returnChunk(done);
      lender.returnChunk(done);
      done.fill(0xee);
    }
  }
  for (const chunk of held) hash.update(chunk);
  return { received, sha256: hash.digest('hex'), memories: memories.size };
}
