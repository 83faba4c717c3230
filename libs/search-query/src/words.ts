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
  if (PLAIN_ASCII.test(text)) return text.split(/[^A-Za-z0-9]+/).filter((word) => word !== '').map((word) => word.toLowerCase());
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

/** Characters that belong to a word (letters, digits, marks, connector punctuation such as _). */
const WORD = '\\p{L}\\p{N}\\p{M}\\p{Pc}';
/** Joiners between two letters: UAX#29 MidLetter, MidNumLet and Single_Quote. */
const LETTER_JOINERS = ":.'\\x{B7}\\x{387}\\x{55F}\\x{5F4}\\x{2018}\\x{2019}\\x{2024}\\x{2027}\\x{FE13}\\x{FE52}\\x{FE55}\\x{FF07}\\x{FF0E}\\x{FF1A}";
/** Joiners between two digits: UAX#29 MidNum, MidNumLet and Single_Quote. */
const DIGIT_JOINERS = ",;.'\\x{37E}\\x{589}\\x{60C}\\x{60D}\\x{66C}\\x{7F8}\\x{2018}\\x{2019}\\x{2024}\\x{2044}\\x{FE10}\\x{FE14}\\x{FE50}\\x{FE52}\\x{FE54}\\x{FF07}\\x{FF0C}\\x{FF0E}\\x{FF1B}";
const SINGLE = '\\p{Han}\\p{Hiragana}';
const RUNS = '\\p{Thai}\\p{Lao}\\p{Khmer}\\p{Myanmar}';
/** Characters that end a Latin (or other alphabetic) word however they stand: other scripts' tokens. */
const OTHER_TOKENS = `[${SINGLE}${RUNS}]`;

/** Han/Hiragana characters are single tokens, Southeast Asian scripts run tokens; the rest letters or digits. */
type Edge = 'letter' | 'digit' | 'single' | 'run';

function edgeOf(character: string): Edge {
  if (SINGLE_CHARACTER_SCRIPTS.test(character)) return 'single';
  if (SOUTHEAST_ASIAN.test(character)) return 'run';
  return /\p{Nd}/u.test(character) ? 'digit' : 'letter';
}

function joinersOf(edge: 'letter' | 'digit'): string {
  return edge === 'letter' ? LETTER_JOINERS : DIGIT_JOINERS;
}

/** A character that cannot sit on this side of a joiner inside one word. */
function notJoinable(edge: 'letter' | 'digit'): string {
  return edge === 'letter' ? `[^\\p{L}\\p{M}]|${OTHER_TOKENS}` : '[^\\p{N}]';
}

/** What may stand right before a word starting with `edge` for the word to begin there. */
function startBoundary(edge: Edge): string {
  if (edge === 'single') return '';
  if (edge === 'run') return `(?:^|[^${RUNS}])`;
  const joiners = joinersOf(edge);
  return `(?:^|[^${WORD}${joiners}]|${OTHER_TOKENS}|(?:^|${notJoinable(edge)})[${joiners}])`;
}

/** What may stand right after a word ending with `edge` for the word to end there. */
function endBoundary(edge: Edge): string {
  if (edge === 'single') return '';
  if (edge === 'run') return `(?:$|[^${RUNS}])`;
  const joiners = joinersOf(edge);
  return `(?:$|[^${WORD}${joiners}]|${OTHER_TOKENS}|[${joiners}](?:$|${notJoinable(edge)}))`;
}

/** What may stand between two adjacent words of a phrase. */
function separator(left: Edge, right: Edge): string {
  if (left === 'single' || right === 'single') return `[^${WORD}]*`;
  // Two runs need something between them; a run and a word of another script may touch.
  if (left === 'run' || right === 'run') return left === right ? `[^${WORD}]+` : `[^${WORD}]*`;
  // A lone joiner between two letters (or two digits) would glue them into one word.
  if (left === right) return `(?:[^${WORD}]{2,}|[^${WORD}${joinersOf(left)}])`;
  return `[^${WORD}]+`;
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
 * A regular expression (to be used case-insensitively) matching a text value
 * that contains these words adjacent and in order — as a phrase query on a
 * StandardTokenizer field would. With `prefix`, the last word may continue.
 */
export function wordPattern(words: readonly string[], prefix = false): string {
  let pattern = startBoundary(edgeOf(firstCharacter(words[0])));
  words.forEach((word, index) => {
    if (index > 0) pattern += separator(edgeOf(lastCharacter(words[index - 1])), edgeOf(firstCharacter(word)));
    pattern += escapeRegex(word);
  });
  if (!prefix) pattern += endBoundary(edgeOf(lastCharacter(words[words.length - 1])));
  return pattern;
}
