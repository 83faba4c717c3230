import { StreamedObject } from './streamed-object';
import { collectable, gatedBatches, nextText } from '../../../../test/support/retention';

// Values bigger than the stream's high-water mark, so it reads one batch ahead at most.
const big = (i: number) => {
  const value = { n: i, text: 'x'.repeat(64 * 1024) };
  return { batch: [[`/k${i}`, value]] as Array<[string, object]>, tracked: value };
};

describe('StreamedObject', () => {
  it('writes the same text JSON.stringify gives for the whole object', async () => {
    async function* batches() {
      yield [['/a', { A: '1', B: null }] as const, ['/skip', undefined] as const];
      yield [] as Array<readonly [string, unknown]>;
      yield [['/b "q"', { C: 'ü' }] as const];
    }
    const stream = (await StreamedObject.start(batches())).toEnvelope().getStream();
    let text = '';
    for await (const chunk of stream) text += chunk.toString();
    expect(text).toBe(JSON.stringify({ success: true, results: { '/a': { A: '1', B: null }, '/b "q"': { C: 'ü' } } }));
  });

  it('answers an empty source as an empty object', async () => {
    async function* none(): AsyncGenerator<Array<[string, unknown]>> {}
    const stream = (await StreamedObject.start(none())).toEnvelope().getStream();
    let text = '';
    for await (const chunk of stream) text += chunk.toString();
    expect(JSON.parse(text)).toEqual({ success: true, results: {} });
  });

  // What a batch leaves referenced while the listing waits (on the socket, on the next batch) lives
  // into the old generation: a 100,000-item folder left 70-90 MB there before these were let go of.
  it('holds no batch it has written while it waits for the next one', async () => {
    const source = gatedBatches(3, big);
    const reader = (await StreamedObject.start(source.batches())).toEnvelope().getStream()[Symbol.asyncIterator]();

    expect(await nextText(reader)).toContain('"/k0":{"n":0');
    expect(await collectable(source.refs[0])).toBe(true);

    source.release(1);
    expect(await nextText(reader)).toContain('"/k1":{"n":1');
    expect(await collectable(source.refs[1])).toBe(true);

    source.release(2);
    let rest = '';
    for (let text = await nextText(reader); text !== ''; text = await nextText(reader)) rest += text;
    expect(rest).toMatch(/"\/k2":\{"n":2,"text":"x+"\}\}\}$/);
  });
});
