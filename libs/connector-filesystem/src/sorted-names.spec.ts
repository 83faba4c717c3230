import { SortedNameRuns } from './sorted-names';

/** Names whose UTF-16 order differs from their UTF-8 byte order and from locale order. */
const awkward = ['b', 'B', 'a', 'ä', 'Z', '\u{1F600}smile', '\uFF5Ewide', 'z10', 'z9', 'é', 'e\u0301', '日本', 'ab', 'a b', 'a-b', '.hidden', '0'];

function runsOf(names: string[], runLength: number): SortedNameRuns {
  const sorted = new SortedNameRuns(runLength);
  for (const name of names) sorted.add(name);
  return sorted;
}

describe('SortedNameRuns', () => {
  it.each([1, 2, 3, 5, 1000])('gives the names in the order Array.prototype.sort gives them (runs of %i)', (runLength) => {
    expect([...runsOf(awkward, runLength).namesAfter()]).toEqual([...awkward].sort());
  });

  it('gives exactly the names after a cursor, whatever the runs', () => {
    const names = Array.from({ length: 500 }, (_, i) => `n${(i * 7919) % 500}`).concat(awkward);
    const expected = [...names].sort();
    for (const after of ['', 'a', 'n250', 'n499', 'z9', '\u{1F600}smile', '\uFFFF']) {
      expect([...runsOf(names, 37).namesAfter(after)]).toEqual(expected.filter((name) => name > after));
    }
  });

  it('gives nothing for no names, and each name once', () => {
    expect([...new SortedNameRuns(4).namesAfter()]).toEqual([]);
    const names = Array.from({ length: 1000 }, (_, i) => `f${String(i).padStart(4, '0')}`).reverse();
    const listed = [...runsOf(names, 64).namesAfter()];
    expect(listed).toHaveLength(1000);
    expect(new Set(listed).size).toBe(1000);
    expect(listed[0]).toBe('f0000');
    expect(listed[999]).toBe('f0999');
  });
});
