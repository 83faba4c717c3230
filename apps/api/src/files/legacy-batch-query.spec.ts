import { InvalidArgumentError } from '@gateway/connector-api';
import { parseLegacyBatchQuery } from './legacy-batch-query';

describe('parseLegacyBatchQuery', () => {
  it('reads id<x>/conn<x>/fname<x> and the bracketed form, in ascending x', () => {
    expect(
      parseLegacyBatchQuery({ id10: 'c', conn10: 'fs', 'id[2]': 'b', 'conn[2]': 'fs', 'fname[2]': 'b.txt', id1: 'a', conn1: 'other', fname1: 'a.txt', x: 'ignored' }, 100),
    ).toEqual([
      { index: 1, id: 'a', connId: 'other', fileName: 'a.txt' },
      { index: 2, id: 'b', connId: 'fs', fileName: 'b.txt' },
      { index: 10, id: 'c', connId: 'fs', fileName: undefined },
    ]);
  });

  it('accepts a nesting query parser (qs) handing id[x] over as objects or arrays', () => {
    expect(parseLegacyBatchQuery({ id: ['a', 'b'], conn: { 0: 'fs', 1: 'fs' } }, 100)).toEqual([
      { index: 0, id: 'a', connId: 'fs', fileName: undefined },
      { index: 1, id: 'b', connId: 'fs', fileName: undefined },
    ]);
  });

  it('lets id1 and id[1] agree', () => {
    expect(parseLegacyBatchQuery({ id1: 'a', 'id[1]': 'a', conn1: 'fs' }, 100)).toHaveLength(1);
  });

  it.each([
    [{}, 'id0'],
    [{ id1: 'a' }, 'conn1'],
    [{ conn1: 'fs' }, 'id1'],
    [{ id1: ['a', 'b'], conn1: 'fs' }, 'id1'],
    [{ id1: 'a', 'id[1]': 'b', conn1: 'fs' }, 'id[1]'],
    [{ id: { x: 'a' } }, 'id[x]'],
    [{ id0: 'a', conn0: 'fs', id1: 'b', conn1: 'fs', id2: 'c', conn2: 'fs' }, 'id0'],
  ])('refuses %j naming %s', (query, parameter) => {
    try {
      parseLegacyBatchQuery(query, 2);
      throw new Error('no error');
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidArgumentError);
      expect((e as InvalidArgumentError).parameter).toBe(parameter);
    }
  });
});
