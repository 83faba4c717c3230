import { KeyedMutex } from './keyed-mutex';

/** A task that records when it starts and ends, and ends when the test says so. */
function heldTask(log: string[], name: string) {
  let finish!: (value: string) => void;
  let fail!: (error: Error) => void;
  const ended = new Promise<string>((resolve, reject) => ((finish = resolve), (fail = reject)));
  const task = async () => {
    log.push(`start ${name}`);
    try {
      return await ended;
    } finally {
      log.push(`end ${name}`);
    }
  };
  return { task, finish: () => finish(name), fail: (e: Error) => fail(e) };
}

const turns = () => new Promise((resolve) => setImmediate(resolve));

describe('KeyedMutex', () => {
  it('runs the tasks of one key one after another, in order of arrival, each with its own answer', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((name) => heldTask(log, name));
    const answers = [mutex.run('k', a.task), mutex.run('k', b.task), mutex.run('k', c.task)];
    await turns();
    expect(log).toEqual(['start a']);
    c.finish();
    b.finish();
    await turns();
    expect(log).toEqual(['start a']);
    a.finish();
    expect(await Promise.all(answers)).toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('runs tasks of different keys at the same time', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const [a, b] = ['a', 'b'].map((name) => heldTask(log, name));
    const answers = [mutex.run('one', a.task), mutex.run('two', b.task)];
    await turns();
    expect(log).toEqual(['start a', 'start b']);
    b.finish();
    a.finish();
    expect(await Promise.all(answers)).toEqual(['a', 'b']);
  });

  it('goes on with the next task after one that fails, which alone rejects', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const [a, b] = ['a', 'b'].map((name) => heldTask(log, name));
    const first = mutex.run('k', a.task);
    const second = mutex.run('k', b.task);
    a.fail(new Error('broken'));
    await expect(first).rejects.toThrow('broken');
    b.finish();
    await expect(second).resolves.toBe('b');
    await expect(mutex.run('k', async () => 'after')).resolves.toBe('after');
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b']);
  });

  it('keeps no key once its last task ended', async () => {
    const mutex = new KeyedMutex();
    await Promise.all([mutex.run('a', async () => 1), mutex.run('a', async () => 2), mutex.run('b', async () => 3)]);
    await mutex.run('c', async () => Promise.reject(new Error('no'))).catch(() => undefined);
    expect((mutex as unknown as { tails: Map<string, unknown> }).tails.size).toBe(0);
  });
});
