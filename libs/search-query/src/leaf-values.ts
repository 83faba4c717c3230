/**
 * The translators' own check of every AST value. The parser already normalised
 * them, but an AST may also be built by code (a connector, a default query), and
 * nothing reaches an engine that has not been checked here.
 */
import { isValidFieldName } from './schema';
import { normaliseNumber, parseDate, parseNumber } from './values';
import { isOneWord, lowercaseWord, wordsOf } from './words';

/** A QueryNode the parser would not have produced. */
export class InvalidQueryNodeError extends Error {
  constructor(message: string) {
    super(message);
    // Stryker disable next-line StringLiteral: the name shows in a stack trace only; the search service turns this error into a 400 by its class and message
    this.name = 'InvalidQueryNodeError';
  }
}

export function checkedField(field: string): string {
  if (!isValidFieldName(field)) throw new InvalidQueryNodeError(`invalid field name '${field}'`);
  return field;
}

export function textWords(value: string): string[] {
  const words = wordsOf(value);
  if (words.length === 0) throw new InvalidQueryNodeError(`'${value}' has no words`);
  return words;
}

export function textPrefix(value: string): string {
  if (!isOneWord(value)) throw new InvalidQueryNodeError(`prefix '${value}' is not one word`);
  return lowercaseWord(value);
}

export function numberValue(value: string): number {
  const number = parseNumber(value);
  if (number === undefined) throw new InvalidQueryNodeError(`'${value}' is not a number`);
  return number;
}

/** The number as text every engine parses (see normaliseNumber). */
export function numberText(value: string): string {
  const text = normaliseNumber(value);
  if (text === undefined) throw new InvalidQueryNodeError(`'${value}' is not a number`);
  return text;
}

/** The instant as a UTC ISO 8601 string with milliseconds. */
export function dateValue(value: string): string {
  const date = parseDate(value);
  if (date === undefined) throw new InvalidQueryNodeError(`'${value}' is not an ISO 8601 timestamp`);
  return date;
}

export function keywordValue(value: string): string {
  if (value === '') throw new InvalidQueryNodeError('empty keyword value');
  return value;
}
