/**
 * The gateway's words: how a value on a text field is cut into the words every
 * engine matches. Solr's `text_general` and Elasticsearch's `standard` analyzer
 * both use Lucene's StandardTokenizer (Unicode UAX#29 word boundaries) and then
 * lowercase, so the gateway cuts query values the same way — with the runtime's
 * own UAX#29 segmenter (Intl.Segmenter) — and the MongoDB translator rebuilds
 * those boundaries as a regular expression (see wordPattern).
 *
 * Two places where ICU and Lucene differ are mended here: ICU joins Han
 * ideographs into dictionary words, Lucene emits each ideograph (and each
 * Hiragana character) as its own token; Lucene's per-code-point lowercasing
 * (Character.toLowerCase) is reproduced instead of String#toLowerCase, which
 * would turn a final Σ into ς and İ into two code points.
 */

const segmenter = new Intl.Segmenter('und', { granularity: 'word' });

/** Characters that Lucene's StandardTokenizer emits one per token. */
const SINGLE_CHARACTER_SCRIPTS = /[\p{Script=Han}\p{Script=Hiragana}]/u;

/** Lowercases code point by code point, as Lucene's LowerCaseFilter does. */
export function lowercaseWord(word: string): string {
  let lowered = '';
  // Per character, so a final Σ stays σ; U+0130 (İ) is the one character String#toLowerCase turns
  // into two code points (i and a combining dot), where Java's Character.toLowerCase gives 'i'.
  for (const character of word) lowered += character === '\u0130' ? 'i' : character.toLowerCase();
  return lowered;
}

/**
 * ASCII text without the characters that may join two words (_ ' . : , ;): here every run of
 * letters and digits is a word, which is what UAX#29 says, found without the segmenter (which
 * costs some 40 µs a call).
 */
const PLAIN_ASCII = /^[A-Za-z0-9\s!"#$%&()*+\-/<=>?@[\]\\^`{|}~]*$/;

/** The lowercased words of a text value, in order. */
export function wordsOf(text: string): string[] {
  // Stryker disable next-line ConditionalExpression: a shortcut only; `false` sends ASCII text through the segmenter, which cuts it alike (the property test says so)
  if (PLAIN_ASCII.test(text)) {
    // Stryker disable next-line Regex: splitting at each separator instead of each run only adds empty parts, dropped by the filter
    return text.split(/[^A-Za-z0-9]+/).filter((word) => word !== '').map((word) => word.toLowerCase());
  }
  return segmentWords(text);
}

/**
 * Thai, Lao, Khmer and Myanmar: ICU cuts them into dictionary words, Lucene keeps each unbroken run
 * of them as one token (its SOUTHEAST_ASIAN rule), so adjacent pieces are joined back.
 */
const SOUTHEAST_ASIAN_CLASS = '\\p{Script=Thai}\\p{Script=Lao}\\p{Script=Khmer}\\p{Script=Myanmar}';
/** A segment cut into Han/Hiragana characters, Southeast Asian runs and the rest. */
const PIECES = new RegExp(
  `[\\p{Script=Han}\\p{Script=Hiragana}]|[${SOUTHEAST_ASIAN_CLASS}]+|[^\\p{Script=Han}\\p{Script=Hiragana}${SOUTHEAST_ASIAN_CLASS}]+`,
  'gu',
);
const SOUTHEAST_ASIAN = new RegExp(`^[${SOUTHEAST_ASIAN_CLASS}]`, 'u');

/** wordsOf through the UAX#29 segmenter, whatever the text. */
export function segmentWords(text: string): string[] {
  const words: string[] = [];
  let southeastAsianEnd = -1;
  for (const segment of segmenter.segment(text)) {
    if (!segment.isWordLike) continue;
    let index = segment.index;
    // ICU keeps Han in dictionary words ("東京タワー"), Lucene has 東, 京, タワー; ICU joins Latin and
    // Thai ("abcสวัสดี") and cuts Thai into dictionary words, Lucene keeps abc and every unbroken
    // Thai, Lao, Khmer or Myanmar run apart.
    for (const piece of segment.segment.match(PIECES) as string[]) {
      if (!SOUTHEAST_ASIAN.test(piece)) words.push(lowercaseWord(piece));
      else if (index === southeastAsianEnd) words[words.length - 1] += piece;
      else words.push(piece);
      index += piece.length;
      if (SOUTHEAST_ASIAN.test(piece)) southeastAsianEnd = index;
    }
  }
  return words;
}

/** Whether the whole value is exactly one word (what a trailing-* prefix on a text field needs). */
export function isOneWord(text: string): boolean {
  const words = wordsOf(text);
  return words.length === 1 && words[0] === lowercaseWord(text);
}

// ---- Regular expressions for engines without an analyzer (MongoDB / FerretDB) ----
// Written for RE2 (FerretDB, Go) and PCRE (MongoDB): no look-around, \p{..} classes only.

// FerretDB 1.24 compiles a $regex again for every document it tests, and Go compiles a negated
// Unicode class ([^\p{L}...]) some 50 times slower than positive categories, so the classes below are
// positive: the characters between words are spaces, symbols, controls, private use and punctuation
// other than connectors (_). Format characters (soft hyphen, zero-width joiners) and unassigned code
// points are neither word nor separator here, as in UAX#29 (which attaches format characters).
const BETWEEN_WORDS = '\\p{Z}\\p{S}\\p{Cc}\\p{Co}\\p{Pd}\\p{Ps}\\p{Pe}\\p{Pi}\\p{Pf}\\p{Po}';
/** Joiners between two letters: UAX#29 MidLetter, MidNumLet and Single_Quote. */
const LETTER_JOINERS = ":.'\u00B7\u0387\u055F\u05F4\u2018\u2019\u2024\u2027\uFE13\uFE52\uFE55\uFF07\uFF0E\uFF1A";
/** Joiners between two digits: UAX#29 MidNum, MidNumLet and Single_Quote. */
const DIGIT_JOINERS = ",;.'\u037E\u0589\u060C\u060D\u066C\u07F8\u2018\u2019\u2024\u2044\uFE10\uFE14\uFE50\uFE52\uFE54\uFF07\uFF0C\uFF0E\uFF1B";
const SINGLE = '\\p{Han}\\p{Hiragana}';
const RUNS = '\\p{Thai}\\p{Lao}\\p{Khmer}\\p{Myanmar}';

/** Han/Hiragana characters are single tokens, Southeast Asian scripts run tokens; the rest letters or digits. */
type Edge = 'letter' | 'digit' | 'single' | 'run';

function edgeOf(character: string): Edge {
  if (SINGLE_CHARACTER_SCRIPTS.test(character)) return 'single';
  if (SOUTHEAST_ASIAN.test(character)) return 'run';
  return /\p{Nd}/u.test(character) ? 'digit' : 'letter';
}

/** Code points as a class body of \x{..} ranges. */
function classRanges(codePoints: number[]): string {
  let body = '';
  for (let index = 0; index < codePoints.length; ) {
    let end = index;
    // Past the last code point the read is undefined, which equals no number: the run ends there.
    while (codePoints[end + 1] === codePoints[end] + 1) end++;
    body += `\\x{${codePoints[index].toString(16)}}`;
    // Stryker disable next-line EqualityOperator,ConditionalExpression: a one-code-point range (x-x) matches what x alone does; only the pattern's length changes
    if (end > index) body += `-\\x{${codePoints[end].toString(16)}}`;
    index = end + 1;
  }
  return body;
}

const QUOTES_AND_OTHER_PUNCTUATION = /[\p{Pi}\p{Pf}\p{Po}]/u;
/** Assigned punctuation lies below U+20000 (plane 2 and up hold ideographs, tags and private use). */
const LAST_PUNCTUATION_PLANE_END = 0x1ffff;

/** Characters between words that are not these joiners, as a class body (computed once per joiner set). */
const betweenWordsExcept = (() => {
  const cache = new Map<string, string>();
  return (joiners: string): string => {
    let body = cache.get(joiners);
    // Stryker disable next-line ConditionalExpression: `true` computes the same body again on every call (the cache saves time only); `false` leaves no body, which every pattern test catches
    if (body === undefined) {
      const punctuation: number[] = [];
      // Stryker disable next-line EqualityOperator: `<` leaves out U+1FFFF, a noncharacter (never punctuation); `>` runs no round, which every pattern test catches
      for (let codePoint = 0; codePoint <= LAST_PUNCTUATION_PLANE_END; codePoint++) {
        const character = String.fromCodePoint(codePoint);
        if (QUOTES_AND_OTHER_PUNCTUATION.test(character) && !joiners.includes(character)) punctuation.push(codePoint);
      }
      body = `\\p{Z}\\p{S}\\p{Cc}\\p{Co}\\p{Pd}\\p{Ps}\\p{Pe}${classRanges(punctuation)}${SINGLE}${RUNS}`;
      cache.set(joiners, body);
    }
    return body;
  };
})();

function joinersOf(edge: 'letter' | 'digit'): string {
  return edge === 'letter' ? LETTER_JOINERS : DIGIT_JOINERS;
}

function joinerClass(edge: 'letter' | 'digit'): string {
  return `[${classRanges([...joinersOf(edge)].map((character) => character.codePointAt(0) as number))}]`;
}

/** A character that cannot sit on this side of a joiner inside one word (a letter needs a letter, a digit a digit). */
function notJoinable(edge: 'letter' | 'digit'): string {
  return edge === 'letter' ? `[\\p{N}\\p{Pc}${BETWEEN_WORDS}${SINGLE}${RUNS}]` : '\\P{N}';
}

/** What may stand right before a word starting with `edge` for the word to begin there. */
function startBoundary(edge: Edge): string {
  if (edge === 'single') return '';
  // Script classes are small: negating them costs little.
  if (edge === 'run') return `(?:^|[^${RUNS}])`;
  return `(?:^|[${betweenWordsExcept(joinersOf(edge))}]|(?:^|${notJoinable(edge)})${joinerClass(edge)})`;
}

/** What may stand right after a word ending with `edge` for the word to end there. */
function endBoundary(edge: Edge): string {
  if (edge === 'single') return '';
  if (edge === 'run') return `(?:$|[^${RUNS}])`;
  return `(?:$|[${betweenWordsExcept(joinersOf(edge))}]|${joinerClass(edge)}(?:$|${notJoinable(edge)}))`;
}

/** What may stand between two adjacent words of a phrase. */
function separator(left: Edge, right: Edge): string {
  if (left === 'single' || right === 'single') return `[${BETWEEN_WORDS}]*`;
  // Two runs need something between them; a run and a word of another script may touch.
  if (left === 'run' || right === 'run') return left === right ? `[${BETWEEN_WORDS}]+` : `[${BETWEEN_WORDS}]*`;
  // A lone joiner between two letters (or two digits) would glue them into one word.
  if (left === right) return `(?:[${BETWEEN_WORDS}]{2,}|[${betweenWordsExcept(joinersOf(left))}])`;
  return `[${BETWEEN_WORDS}]+`;
}

/**
 * Escapes a literal for RE2 and PCRE alike: the set Go's regexp.QuoteMeta escapes, and NUL, which a
 * PCRE pattern (a C string) cannot hold as it is.
 */
export function escapeRegex(literal: string): string {
  return literal.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&').replace(/\0/g, '\\x00');
}

function firstCharacter(word: string): string {
  return [...word][0];
}

function lastCharacter(word: string): string {
  const characters = [...word];
  return characters[characters.length - 1];
}

/**
 * A regular expression (case-insensitive where it needs to be) matching a text value
 * that contains these words adjacent and in order — as a phrase query on a
 * StandardTokenizer field would. With `prefix`, the last word may continue.
 */
export function wordPattern(words: readonly string[], prefix = false): string {
  let pattern = startBoundary(edgeOf(firstCharacter(words[0])));
  words.forEach((word, index) => {
    if (index > 0) pattern += separator(edgeOf(lastCharacter(words[index - 1])), edgeOf(firstCharacter(word)));
    // Case-insensitive on the word only: folding the boundary classes too makes Go's compile slower.
    pattern += `(?i:${escapeRegex(word)})`;
  });
  if (!prefix) pattern += endBoundary(edgeOf(lastCharacter(words[words.length - 1])));
  return pattern;
}
