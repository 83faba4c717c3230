import { registerDecorator, type ValidationOptions } from 'class-validator';

export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Why `name` cannot be a file name, or undefined when it can: the rules repository file names
 * follow (one segment, no '.' or '..', no path separator, no C0/C1 control or DEL), so a name a
 * client chose can travel in a header or be saved by a browser without surprises.
 */
export function fileNameProblem(name: string): string | undefined {
  if (name === '.' || name === '..') return "must not be '.' or '..'";
  if (name.includes('/') || name.includes('\\')) return 'must be a single name without path separators (/ or \\)';
  if (CONTROL_CHARACTERS.test(name)) return 'must not contain control characters (C0, DEL or C1)';
  return undefined;
}

/** class-validator decorator over fileNameProblem; the empty string passes (routes decide what it means). */
export function IsFileName(options: ValidationOptions = {}): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isFileName',
      target: target.constructor,
      propertyName: String(propertyName),
      options,
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || fileNameProblem(value) === undefined,
        defaultMessage: (args) => `${args?.property} ${fileNameProblem(String(args?.value)) ?? 'must be a file name'}`,
      },
    });
}

/**
 * The plain `filename=` of Content-Disposition for clients that ignore `filename*`: printable ASCII
 * only, with anything else (non-ASCII, quotes, separators, controls) replaced by '_' and no leading
 * dots, so it can neither break the header nor name a path. The exact name goes in `filename*`.
 */
export function asciiFallback(name: string): string {
  const base = name.replace(/[^\x20-\x7e]|["\\/%;]/gu, '_').replace(/^[.\s]+/, '').trim();
  return base === '' ? 'download' : base;
}

/** fileNameProblem as a JSON-Schema pattern, for the OpenAPI document. */
export const FILE_NAME_PATTERN = '^(?!\\.\\.?$)[^/\\\\\\u0000-\\u001f\\u007f-\\u009f]*$';
