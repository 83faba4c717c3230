import { VerificationCache } from './verification-cache';

describe('VerificationCache', () => {
  const alice = { username: 'alice', roles: ['user' as const] };

  it('returns a remembered user only for the same password, until the TTL passes', () => {
    let now = 1000;
    const cache = new VerificationCache(60_000, 10, () => now);
    cache.set('alice', 'secret-1', alice);
    expect(cache.get('alice', 'secret-1')).toEqual(alice);
    expect(cache.get('alice', 'secret-2')).toBeUndefined();
    now += 60_000;
    expect(cache.get('alice', 'secret-1')).toBeUndefined();
  });

  it('never keeps the password in its keys', () => {
    const cache = new VerificationCache(60_000);
    cache.set('alice', 'very-secret-password', alice);
    const keys = [...(cache as unknown as { entries: Map<string, unknown> }).entries.keys()];
    expect(keys).toHaveLength(1);
    expect(keys[0]).not.toContain('very-secret-password');
    expect(keys[0]).not.toContain('alice');
  });

  it('forgets every entry of a user at once', () => {
    const cache = new VerificationCache(60_000);
    cache.set('alice', 'a', alice);
    cache.set('alice', 'b', alice);
    cache.set('bob', 'c', { username: 'bob', roles: ['user'] });
    cache.forget('alice');
    expect(cache.get('alice', 'a')).toBeUndefined();
    expect(cache.get('alice', 'b')).toBeUndefined();
    expect(cache.get('bob', 'c')).toBeDefined();
  });

  it('stays bounded by dropping the oldest entry', () => {
    const cache = new VerificationCache(60_000, 2);
    cache.set('u1', 'p', { username: 'u1', roles: [] });
    cache.set('u2', 'p', { username: 'u2', roles: [] });
    cache.set('u3', 'p', { username: 'u3', roles: [] });
    expect(cache.size).toBe(2);
    expect(cache.get('u1', 'p')).toBeUndefined();
    expect(cache.get('u3', 'p')).toBeDefined();
  });

  it('is off when the TTL is 0', () => {
    const cache = new VerificationCache(0);
    cache.set('alice', 'a', alice);
    expect(cache.get('alice', 'a')).toBeUndefined();
  });
});
