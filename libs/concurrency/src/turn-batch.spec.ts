import { TurnBatch } from './turn-batch';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('TurnBatch', () => {
  it('hands over what one turn added as one batch, after the turn, and the next turn apart', async () => {
    const batches: number[][] = [];
    const batch = new TurnBatch<number>((items) => batches.push(items));
    batch.add(1);
    batch.add(2);
    expect(batches).toEqual([]);
    expect(batch.pending).toEqual([1, 2]);
    await nextTurn();
    expect(batches).toEqual([[1, 2]]);
    batch.add(3);
    await nextTurn();
    expect(batches).toEqual([[1, 2], [3]]);
    expect(batch.pending).toEqual([]);
  });

  it('hands over at once on flush, and the scheduled turn then finds nothing to hand', async () => {
    const batches: string[][] = [];
    const batch = new TurnBatch<string>((items) => batches.push(items));
    batch.add('a');
    batch.flush();
    expect(batches).toEqual([['a']]);
    await nextTurn();
    expect(batches).toEqual([['a']]);
    batch.flush();
    expect(batches).toEqual([['a']]);
  });

  it('hands over a batch at once when it reaches maxItems, and the rest of the turn after it', async () => {
    const batches: number[][] = [];
    const batch = new TurnBatch<number>((items) => batches.push(items), 2);
    batch.add(1);
    expect(batches).toEqual([]);
    batch.add(2);
    expect(batches).toEqual([[1, 2]]);
    expect(batch.pending).toEqual([]);
    batch.add(3);
    batch.add(4);
    batch.add(5);
    expect(batches).toEqual([[1, 2], [3, 4]]);
    await nextTurn();
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
    await nextTurn();
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
  });
});
