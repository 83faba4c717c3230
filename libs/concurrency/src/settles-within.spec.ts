import { settlesWithin } from './settles-within';

describe('settlesWithin', () => {
  it('is true for work that resolves or rejects in time, false for work that does not settle', async () => {
    expect(await settlesWithin(Promise.resolve('x'), 1000)).toBe(true);
    expect(await settlesWithin(Promise.reject(new Error('refused')), 1000)).toBe(true);
    expect(await settlesWithin(new Promise(() => undefined), 20)).toBe(false);
  });

  it('leaves no timer behind once the work settled', async () => {
    jest.useFakeTimers();
    try {
      const answer = settlesWithin(Promise.resolve(), 60_000);
      await jest.advanceTimersByTimeAsync(0);
      expect(await answer).toBe(true);
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });
});
