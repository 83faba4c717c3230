import fc from 'fast-check';
import { escapeRegex, isOneWord, lowercaseWord, segmentWords, wordPattern, wordsOf } from './words';

/** The RE2/PCRE pattern as a JavaScript RegExp, to check what it matches. */
function toJs(pattern: string): RegExp {
  // Node 20 has no inline (?i:...) groups: the whole expression is made case-insensitive instead.
  const js = pattern
    .replace(/\(\?i:/g, '(?:')
    .replace(/\\x\{([0-9a-f]+)\}/g, '\\u{$1}')
    .replace(/\\p\{(Han|Hiragana|Thai|Lao|Khmer|Myanmar)\}/g, '\\p{Script=$1}');
  return new RegExp(js, 'iu');
}

const matches = (words: string[], text: string, prefix = false) => toJs(wordPattern(words, prefix)).test(text);

describe('wordsOf', () => {
  it('cuts at UAX#29 word boundaries and lowercases', () => {
    expect(wordsOf('The QUICK, brown fox!')).toEqual(['the', 'quick', 'brown', 'fox']);
    expect(wordsOf("doesn't example.com foo:bar 3.14 1,000 foo_bar abc123")).toEqual([
      "doesn't", 'example.com', 'foo:bar', '3.14', '1,000', 'foo_bar', 'abc123',
    ]);
    expect(wordsOf('user@example.com a.1')).toEqual(['user', 'example.com', 'a', '1']);
  });

  it('makes every Han and Hiragana character a word of its own, as Lucene does', () => {
    expect(wordsOf('中文')).toEqual(['中', '文']);
    expect(wordsOf('ab中文cd')).toEqual(['ab', '中', '文', 'cd']);
    expect(wordsOf('ひらがな カタカナ')).toEqual(['ひ', 'ら', 'が', 'な', 'カタカナ']);
    expect(wordsOf('東京タワー 食べる')).toEqual(['東', '京', 'タワー', '食', 'べ', 'る']);
  });

  it('keeps an unbroken run of Thai, Lao, Khmer or Myanmar one word, as Lucene does', () => {
    expect(wordsOf('สวัสดีครับ ทุกคน')).toEqual(['สวัสดีครับ', 'ทุกคน']);
    expect(wordsOf('abcสวัสดีครับ, ສະບາຍດີ 12สวัสดี')).toEqual(['abc', 'สวัสดีครับ', 'ສະບາຍດີ', '12', 'สวัสดี']);
    expect(wordsOf('สวัสดี สวัสดี')).toEqual(['สวัสดี', 'สวัสดี']);
    expect(wordsOf(' สวัสดี')).toEqual(['สวัสดี']); // a run that is not at the start of the text, nor after another
  });

  it('cuts plain ASCII text (its fast path) exactly as the segmenter does', () => {
    const ascii = fc.string({ unit: fc.constantFrom(...'aZ09 -+!"#$%&()*/<=>?@[]\\^`{|}~\t_\'.:,;'), maxLength: 30 });
    fc.assert(fc.property(ascii, (text) => expect(wordsOf(text)).toEqual(segmentWords(text))), { numRuns: 2000 });
    expect(wordsOf('Ab-9 x')).toEqual(['ab', '9', 'x']);
  });

  it('has no words for punctuation, symbols and emoji', () => {
    expect(wordsOf('!!! ... 😀 &&')).toEqual([]);
    expect(wordsOf('')).toEqual([]);
  });
});

describe('lowercaseWord', () => {
  it('lowercases code point by code point, as Java does', () => {
    expect(lowercaseWord('ÉCLAIR')).toBe('éclair');
    expect(lowercaseWord('ΣΊΣΥΦΟΣ')).toBe('σίσυφοσ');
    expect(lowercaseWord('İstanbul')).toBe('istanbul');
    expect(lowercaseWord('ab')).toBe('ab');
  });
});

describe('isOneWord', () => {
  it('holds only when the whole value is one word', () => {
    expect(isOneWord('Quick')).toBe(true);
    expect(isOneWord("doesn't")).toBe(true);
    expect(isOneWord("doesn'")).toBe(false);
    expect(isOneWord('brown-fox')).toBe(false);
    expect(isOneWord('中文')).toBe(false);
    expect(isOneWord('')).toBe(false);
  });
});

describe('escapeRegex', () => {
  it('escapes every regular expression metacharacter', () => {
    const special = '\\.+*?()|[]{}^$';
    expect(escapeRegex(special)).toBe('\\\\\\.\\+\\*\\?\\(\\)\\|\\[\\]\\{\\}\\^\\$');
    expect(new RegExp(`^${escapeRegex(special)}$`).test(special)).toBe(true);
    expect(escapeRegex('a-b c')).toBe('a-b c');
    expect(escapeRegex('a\0b')).toBe('a\\x00b');
    expect(new RegExp(escapeRegex('a\0b')).test('a\0b')).toBe(true);
  });
});

describe('wordPattern: the word boundaries of StandardTokenizer as a regular expression', () => {
  it('matches a word between boundaries, case-insensitively', () => {
    expect(matches(['fox'], 'The Fox.')).toBe(true);
    expect(matches(['fox'], 'fox')).toBe(true);
    expect(matches(['fox'], 'foxes')).toBe(false);
    expect(matches(['fox'], 'afox')).toBe(false);
    expect(matches(['fox'], 'fox_y')).toBe(false);
    expect(matches(['fox'], 'fox1')).toBe(false);
  });

  it('does not cut a word at a joiner between letters', () => {
    expect(matches(['doesn'], "doesn't")).toBe(false);
    expect(matches(['t'], "doesn't")).toBe(false);
    expect(matches(['example'], 'example.com')).toBe(false);
    expect(matches(['com'], 'example.com')).toBe(false);
    expect(matches(['example.com'], 'see example.com.')).toBe(true);
    expect(matches(['foo'], 'foo:bar')).toBe(false);
  });

  it('cuts a word at a joiner not followed by a letter', () => {
    expect(matches(['example'], 'example. Then')).toBe(true);
    expect(matches(['example'], "the example's end")).toBe(false);
    expect(matches(['example'], "example'")).toBe(true);
    expect(matches(['example'], "'example'")).toBe(true);
    expect(matches(['example'], '1.example')).toBe(true);
    expect(matches(['example'], 'a..example')).toBe(true);
    expect(matches(['a'], 'a.1')).toBe(true);
  });

  it('joins digits over , and . but cuts them elsewhere', () => {
    expect(matches(['3'], '3.14')).toBe(false);
    expect(matches(['14'], '3.14')).toBe(false);
    expect(matches(['1,000'], 'about 1,000 of')).toBe(true);
    expect(matches(['1'], '1, 2')).toBe(true);
    expect(matches(['1'], '1:2')).toBe(true);
    expect(matches(['2'], '1:2')).toBe(true);
    expect(matches(['2'], 'a,2')).toBe(true);
    expect(matches(['2'], '2,')).toBe(true);
  });

  it('matches phrases over any separator but a joiner', () => {
    expect(matches(['brown', 'fox'], 'A brown  fox')).toBe(true);
    expect(matches(['brown', 'fox'], 'A brown-fox')).toBe(true);
    expect(matches(['brown', 'fox'], 'A brown, fox')).toBe(true);
    expect(matches(['brown', 'fox'], "brown'fox")).toBe(false);
    expect(matches(['brown', 'fox'], 'brownfox')).toBe(false);
    expect(matches(['brown', 'fox'], 'brown quick fox')).toBe(false);
    expect(matches(['1', '2'], '1,2')).toBe(false);
    expect(matches(['1', '2'], '1;;2')).toBe(true);
    expect(matches(['1', '2'], '1 2')).toBe(true);
    expect(matches(['a', '1'], 'a.1')).toBe(true);
    expect(matches(['a', '1'], 'a1')).toBe(false);
  });

  it('needs no boundary around Han and Hiragana characters', () => {
    expect(matches(['中'], 'ab中文')).toBe(true);
    expect(matches(['中', '文'], '中文')).toBe(true);
    expect(matches(['中', '文'], '中 文')).toBe(true);
    expect(matches(['ab', '中'], 'ab中')).toBe(true);
    expect(matches(['中', 'ab'], '中ab')).toBe(true);
  });

  it('bounds Thai, Lao, Khmer and Myanmar runs by their script alone', () => {
    expect(matches(['สวัสดีครับ'], 'abcสวัสดีครับ, x')).toBe(true);
    expect(matches(['สวัสดี'], 'สวัสดีครับ')).toBe(false);
    expect(matches(['ครับ'], 'สวัสดีครับ')).toBe(false);
    expect(matches(['abc'], 'abcสวัสดี')).toBe(true);
    expect(matches(['abc'], 'สวัสดีabc')).toBe(true);
    expect(matches(['12'], '12สวัสดี')).toBe(true);
    expect(matches(['abc', 'สวัสดี'], 'abcสวัสดี')).toBe(true);
    expect(matches(['สวัสดี', 'abc'], 'สวัสดี abc')).toBe(true);
    expect(matches(['สวัสดี', 'ทุกคน'], 'สวัสดี ทุกคน')).toBe(true);
    expect(matches(['สวัสดี', 'ทุกคน'], 'สวัสดีทุกคน')).toBe(false);
    expect(matches(['a', 'b'], "a'b")).toBe(false);
  });

  it('finds each word the tokenizer cuts beside Han, Thai, a joiner or a connector', () => {
    // What MongoDB must find for a user, as Solr and Elasticsearch do: every word of the text, each on its own.
    const texts = ['中ab', 'ab中', '中.ab', 'ab.中', '中.12', '12.中', '1.中', 'é.中', 'สวัสดี.12', '12.สวัสดี', 'fox._', "_'fox", '12_a b'];
    for (const text of texts) {
      const words = wordsOf(text);
      expect({ text, words: words.length > 0 }).toEqual({ text, words: true });
      for (const word of words) expect({ text, word, found: matches([word], text) }).toEqual({ text, word, found: true });
    }
    // A Thai run is no letter: a joiner between it and a word joins nothing (Lucene: สวัสดี . ab).
    expect(matches(['ab'], 'สวัสดี.ab')).toBe(true);
    expect(matches(['ab'], 'ab.สวัสดี')).toBe(true);
    // and only where a word ends: a word glued to a letter is not found.
    expect(matches(['ab'], 'xab中')).toBe(false);
    expect(matches(['ab'], '中abx')).toBe(false);
    expect(matches(['12'], '中123')).toBe(false);
  });

  it('lets the last word continue for a prefix', () => {
    expect(matches(['qui'], 'quickly', true)).toBe(true);
    expect(matches(['qui'], 'aquick', true)).toBe(false);
    expect(matches(['brown', 'fo'], 'brown fox', true)).toBe(true);
  });

  it('makes only the words case-insensitive', () => {
    expect(wordPattern(['fox'])).toContain('(?i:fox)');
    expect(wordPattern(['fox']).replace('(?i:fox)', '')).not.toContain('(?i');
  });

  it('escapes the words', () => {
    expect(matches(['a.b'], 'axb')).toBe(false);
    expect(wordPattern(['a+b'])).toContain('a\\+b');
  });
});
