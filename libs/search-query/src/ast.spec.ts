import { SearchSyntaxError } from './ast';

describe('SearchSyntaxError', () => {
  it('names itself, the parameter, the reason and the position in what a log or a stack trace prints', () => {
    const error = new SearchSyntaxError('fq', 7, "unbalanced ')'");
    expect(String(error)).toBe("SearchSyntaxError: fq: unbalanced ')' at position 7");
    expect(error.stack?.split('\n')[0]).toBe("SearchSyntaxError: fq: unbalanced ')' at position 7");
    expect([error.parameter, error.position, error.reason]).toEqual(['fq', 7, "unbalanced ')'"]);
  });
});
