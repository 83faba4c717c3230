import { isDatabaseUnavailable } from './database';

describe('isDatabaseUnavailable', () => {
  const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it.each([
    ['a refused connection', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a reset connection', withCode('ECONNRESET')],
    ['a server shutting down (57P01)', withCode('57P01', 'terminating connection due to administrator command')],
    ['a server starting up (57P03)', withCode('57P03', 'the database system is starting up')],
    ['a connection exception class (08006)', withCode('08006', 'connection failure')],
    ['the pool connect time-out', new Error('timeout exceeded when trying to connect')],
    ['the query time-out', new Error('Query read timeout')],
    ['a connection lost mid-query', new Error('Connection terminated unexpectedly')],
    // Socket errors come from Node's own realm: not `instanceof Error` under jest's sandbox.
    ['an error object of another realm', { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' }],
  ])('%s: yes', (_title, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation (23505)', withCode('23505', 'duplicate key value violates unique constraint')],
    ['a syntax error (42601)', withCode('42601', 'syntax error at or near')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['not an error', 'ECONNREFUSED'],
    ['nothing', undefined],
  ])('%s: no', (_title, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
