/**
 * The search contract's corpus: generated from a seed (same documents every
 * run) out of a small ASCII vocabulary, so every engine tokenises the same
 * words the same way.
 */
export interface CorpusDocument {
  id: string;
  title: string;
  content: string;
  mime_type: string;
  author: string;
  /** Left out when the document has no tag. */
  tags?: string[];
  size: number;
  /** ISO 8601 UTC, whole seconds. */
  created: string;
}

export const CORPUS_SIZE = 520;

const WORDS = [
  'alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet',
  'kilo', 'lima', 'mike', 'november', 'oscar', 'papa', 'quebec', 'romeo', 'sierra', 'tango',
  'report', 'budget', 'meeting', 'invoice', 'contract', 'river', 'mountain', 'garden', 'winter', 'summer',
];
export const MIME_TYPES = ['application/pdf', 'text/plain', 'text/html', 'image/png', 'application/msword'];
export const AUTHORS = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi'];
export const TAGS = ['finance', 'legal', 'hr', 'draft', 'final', 'urgent', 'archive', 'public', 'internal', 'review'];

/** mulberry32: a tiny seeded generator, enough for test data. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function generateCorpus(seed = 20261123, size = CORPUS_SIZE): CorpusDocument[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)];
  const words = (min: number, max: number) => {
    const n = min + Math.floor(next() * (max - min + 1));
    // Some words capitalised: matching is case-insensitive on every engine.
    return Array.from({ length: n }, () => {
      const word = pick(WORDS);
      return next() < 0.15 ? word[0].toUpperCase() + word.slice(1) : word;
    }).join(' ');
  };
  const start = Date.UTC(2020, 0, 1);
  const span = Date.UTC(2025, 0, 1) - start;
  const docs: CorpusDocument[] = [];
  for (let i = 1; i <= size; i++) {
    const tagCount = Math.floor(next() * 4);
    const tags = [...new Set(Array.from({ length: tagCount }, () => pick(TAGS)))].sort();
    const doc: CorpusDocument = {
      id: `doc-${String(i).padStart(4, '0')}`,
      title: words(2, 5),
      content: words(8, 20),
      mime_type: pick(MIME_TYPES),
      author: pick(AUTHORS),
      size: Math.floor(next() * 100_000),
      created: new Date(start + Math.floor((next() * span) / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
    };
    if (tags.length > 0) doc.tags = tags;
    docs.push(doc);
  }
  return docs;
}
