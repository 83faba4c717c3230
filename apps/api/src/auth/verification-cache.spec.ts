import { VerificationCache } from './verification-cache';

describe('VerificationCache', () => {
  const alice = { username: 'alice', roles: ['user' as const] };
  const bob = { username: 'bob', roles: ['user' as const] };

  it('returns a remembered user only for the same password, until the TTL passes', () => {
    let now = 1000;
    const cache = new VerificationCache(60_000, 10, () => now);
    cache.set('alice', 'secret-1', alice);
    expect(cache.get('alice', 'secret-1')).toEqual(alice);
    expect(cache.get('alice', 'secret-2')).toBeUndefined();
    now += 59_999;
    expect(cache.get('alice', 'secret-1')).toEqual(alice);
    now += 1;
    expect(cache.get('alice', 'secret-1')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('keeps the user name and the password apart in its keys', () => {
    const cache = new VerificationCache(60_000);
    cache.set('a', 'bc', alice);
    expect(cache.get('ab', 'c')).toBeUndefined();
    cache.set('ab', 'c', bob);
    expect(cache.size).toBe(2);
    expect(cache.get('a', 'bc')).toEqual(alice);
    expect(cache.get('ab', 'c')).toEqual(bob);
  });

  it('never keeps the password in its keys', () => {
    const cache = new VerificationCache(60_000);
    cache.set('alice', 'very-secret-password', alice);
    const keys = [...(cache as unknown as { entries: Map<string, unknown> }).entries.keys()];
    expect(keys).toHaveLength(1);
    expect(keys[0]).not.toContain('very-secret-password');
    expect(keys[0]).not.toContain('alice');
  });

  it('forgets every entry of a user at once, and only that user', () => {
    const cache = new VerificationCache(60_000);
    cache.set('alice', 'a', alice);
    cache.set('alice', 'b', alice);
    cache.set('bob', 'c', bob);
    cache.forget('alice');
    expect(cache.get('alice', 'a')).toBeUndefined();
    expect(cache.get('alice', 'b')).toBeUndefined();
    expect(cache.get('bob', 'c')).toEqual(bob);
    expect(cache.size).toBe(1);
  });

  it('stays bounded by dropping the oldest entry', () => {
    const cache = new VerificationCache(60_000, 2);
    cache.set('u1', 'p', { username: 'u1', roles: [] });
    cache.set('u2', 'p', { username: 'u2', roles: [] });
    cache.set('u3', 'p', { username: 'u3', roles: [] });
    expect(cache.size).toBe(2);
    expect(cache.get('u1', 'p')).toBeUndefined();
    expect(cache.get('u2', 'p')).toEqual({ username: 'u2', roles: [] });
    expect(cache.get('u3', 'p')).toEqual({ username: 'u3', roles: [] });
  });

  it('replaces the entry of the same credentials in place', () => {
    const cache = new VerificationCache(60_000, 2);
    cache.set('alice', 'a', alice);
    cache.set('alice', 'a', alice);
    expect(cache.size).toBe(1);
  });

  it('is off when the TTL is 0: it keeps nothing', () => {
    const cache = new VerificationCache(0);
    cache.set('alice', 'a', alice);
    expect(cache.size).toBe(0);
    expect(cache.get('alice', 'a')).toBeUndefined();
  });
});
