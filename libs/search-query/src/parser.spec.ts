import { type QueryNode, SearchSyntaxError } from './ast';
import { MAX_DEPTH, MAX_TERMS, fieldsOf, parseQuery, parseSort } from './parser';

const q = (text: string) => parseQuery(text, 'q');
const term = (field: string, value: string): QueryNode => ({ kind: 'term', field, value });
const content = (value: string) => term('content', value);
const bool = (must: QueryNode[], should: QueryNode[], mustNot: QueryNode[]): QueryNode => ({ kind: 'bool', must, should, mustNot });

function syntaxError(text: string, parameter: 'q' | 'fq' = 'q'): SearchSyntaxError {
  try {
    parseQuery(text, parameter);
  } catch (error) {
    expect(error).toBeInstanceOf(SearchSyntaxError);
    return error as SearchSyntaxError;
  }
  throw new Error(`${text} parsed`);
}

function expectError(text: string, position: number, reason: string | RegExp): void {
  const error = syntaxError(text);
  expect(error.parameter).toBe('q');
  expect({ position: error.position, reason: error.reason }).toEqual({ position, reason: typeof reason === 'string' ? expect.stringContaining(reason) : expect.stringMatching(reason) });
}

describe('parseQuery: terms and fields', () => {
  it('searches content for a bare word, lowercased', () => {
    expect(q('Fox')).toEqual(content('fox'));
  });

  it('reads *:* as every document', () => {
    expect(q('*:*')).toEqual({ kind: 'all' });
    expect(q('  *:*  ')).toEqual({ kind: 'all' });
  });

  it('reads field:value on a text field as one lowercased word', () => {
    expect(q('title:REPORT')).toEqual(term('title', 'report'));
  });

  it('turns a text value of several words into a phrase of those words', () => {
    expect(q('title:brown-Fox')).toEqual({ kind: 'phrase', field: 'title', value: 'brown fox' });
    expect(q('"The  quick, brown"')).toEqual({ kind: 'phrase', field: 'content', value: 'the quick brown' });
  });

  it('keeps a quoted text value of one word a term', () => {
    expect(q('"Fox"')).toEqual(content('fox'));
    expect(q('title:"Fox!"')).toEqual(term('title', 'fox'));
  });

  it("cuts words as Lucene's StandardTokenizer does", () => {
    expect(q("doesn't")).toEqual(content("doesn't"));
    expect(q('example.com')).toEqual(content('example.com'));
    expect(q('中文')).toEqual({ kind: 'phrase', field: 'content', value: '中 文' });
  });

  it('keeps keyword values exact and case-sensitive, quoted or not', () => {
    expect(q('author:Ann')).toEqual(term('author', 'Ann'));
    expect(q('author:"Ann Smith"')).toEqual(term('author', 'Ann Smith'));
    expect(q('mime_type:application/pdf')).toEqual(term('mime_type', 'application/pdf'));
  });

  it('treats fields the schema does not name as keyword', () => {
    expect(q('prop_colour:Red')).toEqual(term('prop_colour', 'Red'));
    expect(q('a.b_c:X')).toEqual(term('a.b_c', 'X'));
  });

  it('uses the schema it is given', () => {
    expect(parseQuery('author:Ann', 'q', { author: 'text' })).toEqual(term('author', 'ann'));
    expect(parseQuery('Fox', 'q', {})).toEqual(content('Fox'));
  });

  it('reads colons after the field name as part of the value', () => {
    expect(q('prop_time:12:30')).toEqual(term('prop_time', '12:30'));
    expect(q('created:2024-01-15T10:00:00Z')).toEqual(term('created', '2024-01-15T10:00:00.000Z'));
  });

  it('unescapes backslashed characters', () => {
    expect(q('author:Ann\\ Smith')).toEqual(term('author', 'Ann Smith'));
    expect(q('author:a\\(b\\)\\?\\*')).toEqual(term('author', 'a(b)?*'));
    expect(q('content:foo\\:bar')).toEqual(content('foo:bar'));
    expect(q('author:\\😀x')).toEqual(term('author', '😀x'));
    expect(q('author:"say \\"hi\\" \\\\"')).toEqual(term('author', 'say "hi" \\'));
  });

  it('reads a trailing * as a prefix: one lowercased word on text fields, the exact start on keywords', () => {
    expect(q('Quick*')).toEqual({ kind: 'prefix', field: 'content', value: 'quick' });
    expect(q('author:An*')).toEqual({ kind: 'prefix', field: 'author', value: 'An' });
    expect(q("title:Doesn't*")).toEqual({ kind: 'prefix', field: 'title', value: "doesn't" });
  });

  it('reads field:* and a bare * as "has a value"', () => {
    expect(q('tags:*')).toEqual({ kind: 'exists', field: 'tags' });
    expect(q('*')).toEqual({ kind: 'exists', field: 'content' });
  });

  it('normalises numbers and dates', () => {
    expect(q('size:42')).toEqual(term('size', '42'));
    expect(q('size:-5')).toEqual(term('size', '-5'));
    expect(q('size:1e3')).toEqual(term('size', '1000'));
    expect(q('size:2.50')).toEqual(term('size', '2.5'));
    expect(q('size:"7"')).toEqual(term('size', '7'));
    expect(q('created:2024-01-15')).toEqual(term('created', '2024-01-15T00:00:00.000Z'));
    expect(q('modified:"2024-01-15T12:00:00+02:00"')).toEqual(term('modified', '2024-01-15T10:00:00.000Z'));
  });
});

describe('parseQuery: ranges', () => {
  it('reads inclusive number and date ranges with open ends', () => {
    expect(q('size:[1 TO 10]')).toEqual({ kind: 'range', field: 'size', low: '1', high: '10' });
    expect(q('size:[ * TO 1e2 ]')).toEqual({ kind: 'range', field: 'size', high: '100' });
    expect(q('created:[2024-01-01 TO *]')).toEqual({ kind: 'range', field: 'created', low: '2024-01-01T00:00:00.000Z' });
    expect(q('created:["2024-01-01T00:00:00Z" TO "2024-02-01T00:00:00Z"]')).toEqual({
      kind: 'range',
      field: 'created',
      low: '2024-01-01T00:00:00.000Z',
      high: '2024-02-01T00:00:00.000Z',
    });
  });

  it('reads [* TO *] as "has a value"', () => {
    expect(q('size:[* TO *]')).toEqual({ kind: 'exists', field: 'size' });
  });

  it('refuses ranges on text and keyword fields and bad bounds', () => {
    expectError('title:[a TO b]', 6, "has a range on 'title'; ranges apply to number and date fields");
    expectError('[1 TO 2]', 0, "has a range on 'content'");
    expectError('author:[a TO b]', 7, "has a range on 'author'");
    expectError('size:[1 TO x]', 11, "has 'x', which is not a number");
    expectError('created:[2024-13-01 TO *]', 9, "has '2024-13-01', which is not an ISO 8601 timestamp");
  });

  it('refuses malformed ranges', () => {
    expectError('size:[1 TO 2}', 12, "has an exclusive range end '}'");
    expectError('size:{1 TO 2]', 5, "has an exclusive range '{'");
    expectError('{1 TO 2]', 0, "has an exclusive range '{'");
    expectError('size:[1 2]', 8, "expects 'TO'");
    expectError('size:[1 TOO 2]', 8, "expects 'TO'");
    expectError('size:[1 TO 2', 12, "expects ']' to close the range");
    expectError('size:[1 TO 2 3]', 13, "expects ']'");
    expectError('size:[1 TO ]', 11, 'expects a range bound');
    expectError('size:["1 TO 2]', 6, "has a '\"' without a closing '\"'");
  });
});

describe('parseQuery: boolean logic', () => {
  const a = content('a');
  const b = content('b');
  const c = content('c');

  it('reads juxtaposition and OR alike: any of the clauses', () => {
    expect(q('a b')).toEqual(bool([], [a, b], []));
    expect(q('a OR b')).toEqual(bool([], [a, b], []));
  });

  it('reads AND as every clause', () => {
    expect(q('a AND b AND c')).toEqual(bool([a, b, c], [], []));
  });

  it('binds AND tighter than OR', () => {
    expect(q('a OR b AND c')).toEqual(bool([], [a, bool([b, c], [], [])], []));
    expect(q('a AND b OR c')).toEqual(bool([], [bool([a, b], [], []), c], []));
  });

  it('reads + as must and - or NOT as must not, Lucene style', () => {
    expect(q('+a b -c')).toEqual(bool([a], [b], [c]));
    expect(q('a NOT b')).toEqual(bool([], [a], [b]));
    expect(q('a OR NOT b')).toEqual(bool([], [a], [b]));
    expect(q('+a')).toEqual(a);
  });

  it('keeps a lone negation as "everything but"', () => {
    expect(q('-a')).toEqual(bool([], [], [a]));
    expect(q('NOT a')).toEqual(bool([], [], [a]));
  });

  it('puts NOT and - operands of AND among the must-nots', () => {
    expect(q('a AND NOT b')).toEqual(bool([a], [], [b]));
    expect(q('NOT a AND -b')).toEqual(bool([], [], [a, b]));
    expect(q('+a AND b')).toEqual(bool([a, b], [], []));
  });

  it('groups with parentheses', () => {
    expect(q('(a OR b) AND c')).toEqual(bool([bool([], [a, b], []), c], [], []));
    expect(q('-(a b)')).toEqual(bool([], [], [bool([], [a, b], [])]));
    expect(q('((a))')).toEqual(a);
  });

  it('applies a field to a group: field:((a) OR (b))', () => {
    expect(q('tags:((x) OR (y))')).toEqual(bool([], [term('tags', 'x'), term('tags', 'y')], []));
    expect(q('title:(a author:B)')).toEqual(bool([], [term('title', 'a'), term('author', 'B')], []));
  });

  it('reads lowercase and, or, not and words merely starting with an operator as words', () => {
    expect(q('a and b')).toEqual(bool([], [a, content('and'), b], []));
    expect(q('ANDROID ORACLE NOTE')).toEqual(bool([], [content('android'), content('oracle'), content('note')], []));
  });

  it('accepts operators right before a parenthesis or a quote', () => {
    expect(q('a AND(b)')).toEqual(bool([a, b], [], []));
    expect(q('NOT"b"')).toEqual(bool([], [], [b]));
  });

  it('separates clauses at any whitespace and at parentheses', () => {
    expect(q('a\tb\nc')).toEqual(bool([], [a, b, c], []));
    expect(q('a(b)')).toEqual(bool([], [a, b], []));
    expect(q('*:*(a)')).toEqual(bool([], [{ kind: 'all' }, a], []));
    expect(q('(*:*)')).toEqual({ kind: 'all' });
    expect(q('*(a)')).toEqual(bool([], [{ kind: 'exists', field: 'content' }, a], []));
    expect(q('tags:x(a)')).toEqual(bool([], [term('tags', 'x'), a], []));
  });

  it('reads a phrase followed directly by a term as two clauses', () => {
    expect(q('"a"b')).toEqual(bool([], [a, b], []));
  });
});

describe('parseQuery: errors name the parameter and the position', () => {
  it('names fq in fq errors', () => {
    const error = syntaxError('tags:(a', 'fq');
    expect(error.parameter).toBe('fq');
    expect(error.message).toBe("fq: has a '(' without a matching ')' at position 5");
  });

  it('refuses an empty query', () => {
    expectError('', 0, 'is empty');
    expectError('   ', 0, 'is empty');
  });

  it('refuses unbalanced parentheses and quotes', () => {
    expectError('(a', 0, "has a '(' without a matching ')'");
    expectError('a)', 1, "has a ')' without a matching '('");
    expectError('()', 1, 'expects a term');
    expectError('"abc', 0, "has a '\"' without a closing '\"'");
    expectError('"abc\\', 0, "has a '\"' without a closing '\"'");
  });

  it('refuses operators without operands', () => {
    expectError('OR a', 0, "has 'OR' with nothing before it");
    expectError('AND a', 0, "has 'AND' with nothing before it");
    expectError('a OR', 4, "expects a term after 'OR'");
    expectError('(a OR)', 5, "expects a term after 'OR'");
    expectError('a OR"', 4, "has a '\"' without a closing");
    expectError('*:*x', 0, "starts a term with '*'");
    expectError('(a OR )', 6, "expects a term after 'OR'");
    expectError('a OR OR b', 5, "expects a term after 'OR'");
    expectError('a OR AND b', 5, "expects a term after 'OR'");
    expectError('a AND', 5, "expects a term after 'AND'");
    expectError('(a AND)', 6, "expects a term after 'AND'");
    expectError('a AND AND b', 6, "expects a term after 'AND'");
    expectError('a AND OR b', 6, "expects a term after 'AND'");
    expectError('NOT', 3, "expects a term after 'NOT'");
    expectError('(NOT)', 4, "expects a term after 'NOT'");
    expectError('NOT NOT a', 4, "has 'NOT' where a term should be");
    expectError('a - b', 2, "expects a term right after '-'");
    expectError('a +', 2, "expects a term right after '+'");
    expectError('--a', 1, "has '-' where a term should start");
    expectError('NOT +a', 4, "has '+' where a term should start");
  });

  it('refuses Lucene syntax the language does not have', () => {
    expectError('fo?', 2, "has '?', which must be escaped (\\?) or quoted");
    expectError('fox~2', 3, "has '~'");
    expectError('fox^2', 3, "has '^'");
    expectError('"a b"~2', 5, "has '~'");
    expectError('a!', 1, "has '!'");
    expectError('a]', 1, "has ']'");
    expectError('f*o', 1, "has '*' inside a term");
    expectError('fo**', 2, "has '*' inside a term");
    expectError('*fox', 0, "starts a term with '*'");
    expectError('*:fox', 0, "starts a term with '*'");
    expectError('a*:fox', 1, "has '*' inside a term");
    expectError('a\\', 1, "ends with a lone '\\'");
  });

  it('refuses invalid field names, Solr magic fields and escaped field names', () => {
    expectError('$where:1', 0, "names an invalid field '$where'");
    expectError('1a:b', 0, "names an invalid field '1a'");
    expectError(':b', 0, "names an invalid field ''");
    expectError('_query_:x', 0, "names an invalid field '_query_'");
    expectError('_val_:x', 0, "names an invalid field '_val_'");
    expectError('a\\ b:c', 0, 'names a field with an escaped character');
  });

  it('refuses a field without a value', () => {
    expectError('title:', 6, "expects a value after 'title:'");
    expectError('title: fox', 6, "expects a value after 'title:'");
    expectError('(title:)', 7, "expects a value after 'title:'");
  });

  it('refuses values the field type cannot hold', () => {
    expectError('!!!', 0, "has '!'");
    expectError('title:"..."', 6, "has '...', which has no letters or digits");
    expectError('a && b', 2, "has '&&', which has no letters or digits");
    expectError('author:""', 7, "has an empty value for 'author'");
    expectError('size:abc', 5, "has 'abc', which is not a number");
    expectError('size:1e999', 5, "has '1e999', which is not a number");
    expectError('created:yesterday', 8, 'is not an ISO 8601 timestamp');
    expectError('size:4*', 5, "has a trailing '*' on number field 'size'");
    expectError('created:2024*', 8, "has a trailing '*' on date field 'created'");
    expectError('title:brown-fo*', 6, "a trailing '*' applies to one word");
    expectError('title:"*"', 6, 'has no letters or digits');
  });

  it('refuses nesting deeper than MAX_DEPTH', () => {
    const deep = (levels: number) => `${'('.repeat(levels)}a${')'.repeat(levels)}`;
    expect(q(deep(MAX_DEPTH))).toEqual(content('a'));
    expectError(deep(MAX_DEPTH + 1), MAX_DEPTH, `nests parentheses deeper than ${MAX_DEPTH}`);
    expectError(`tags:${deep(MAX_DEPTH + 1)}`, 5 + MAX_DEPTH, 'nests parentheses deeper');
  });

  it('refuses more than MAX_TERMS terms', () => {
    const many = (count: number) => Array.from({ length: count }, () => 'a').join(' ');
    expect(q(many(MAX_TERMS))).toMatchObject({ kind: 'bool' });
    expectError(many(MAX_TERMS + 1), MAX_TERMS * 2, `has more than ${MAX_TERMS} terms`);
    expectError(`${many(MAX_TERMS)} size:[1 TO 2]`, MAX_TERMS * 2 + 5, 'has more than');
  });
});

describe('fieldsOf', () => {
  it('lists each field once, in order of appearance', () => {
    expect(fieldsOf(q('tags:a AND (size:[1 TO 2] OR -tags:b) NOT author:x *:*'))).toEqual(['tags', 'size', 'author']);
    expect(fieldsOf(q('*:*'))).toEqual([]);
    expect(fieldsOf(q('fox'))).toEqual(['content']);
    expect(fieldsOf(q('tags:*'))).toEqual(['tags']);
  });
});

describe('parseSort', () => {
  it('reads a comma list of field and direction', () => {
    expect(parseSort('size desc, author asc')).toEqual([
      { field: 'size', direction: 'desc' },
      { field: 'author', direction: 'asc' },
    ]);
    expect(parseSort('  ')).toEqual([]);
    expect(parseSort('')).toEqual([]);
  });

  it('refuses malformed items, naming sort and the position', () => {
    const errorOf = (text: string) => {
      try {
        parseSort(text);
      } catch (error) {
        expect(error).toBeInstanceOf(SearchSyntaxError);
        return { parameter: (error as SearchSyntaxError).parameter, position: (error as SearchSyntaxError).position, reason: (error as SearchSyntaxError).reason };
      }
      throw new Error('parsed');
    };
    expect(errorOf('size')).toEqual({ parameter: 'sort', position: 0, reason: "expects 'field asc' or 'field desc', found 'size'" });
    expect(errorOf('size asc,')).toEqual({ parameter: 'sort', position: 9, reason: "expects 'field asc' or 'field desc', found ''" });
    expect(errorOf('size asc, author up')).toEqual({ parameter: 'sort', position: 16, reason: "expects asc or desc after 'author', found 'up'" });
    expect(errorOf('size asc,  $x asc')).toEqual({ parameter: 'sort', position: 11, reason: "names an invalid field '$x'" });
    expect(errorOf('_version_ asc')).toEqual({ parameter: 'sort', position: 0, reason: "names an invalid field '_version_'" });
    expect(errorOf('size asc,title desc')).toEqual({ parameter: 'sort', position: 9, reason: "cannot sort on text field 'title'" });
    expect(errorOf('size asc desc')).toEqual({ parameter: 'sort', position: 0, reason: "expects 'field asc' or 'field desc', found 'size asc desc'" });
  });

  it('uses the schema it is given', () => {
    expect(parseSort('title asc', { title: 'keyword' })).toEqual([{ field: 'title', direction: 'asc' }]);
  });
});
