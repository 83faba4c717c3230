import { WINDOWS_FORBIDDEN_CHARACTERS, WINDOWS_RESERVED_STEMS, type NamingRules } from '@gateway/connector-api';

/**
 * The names a filesystem repository takes (paths.ts): one segment of at most 255 UTF-8 bytes (the
 * limit of ext4, XFS, btrfs and APFS), without `/`, `\`, NUL or other controls, neither `.` nor `..`,
 * compared byte for byte. `%` is no character of these rules: paths.ts refuses a name only when one
 * of its percent-decoded forms breaks them (`a%2Fb`; with a stray `%`, `｜` U+FF5C reads as `\`), which
 * a copy job's sanitizing undoes by making each `%` a full-width `％`.
 */
export const FILESYSTEM_NAMING_RULES: NamingRules = {
  forbiddenCharacters: '/\\',
  controlCharacters: 'c0-c1',
  percentDecodedForms: true,
  maxSegment: { max: 255, unit: 'bytes' },
  reference: 'POSIX filesystems (255-byte names) and the filesystem connector (paths.ts)',
};

/**
 * With the connector param `windowsNames: true`, the names Windows takes too (a folder shared over SMB,
 * or copied on to a Windows disk later): no `" * : < > ? / \ |`, no trailing dot or space, no device
 * name (CON, PRN, AUX, NUL, COM0–9, LPT0–9, with or without an extension), case-insensitive.
 */
export const WINDOWS_FILESYSTEM_NAMING_RULES: NamingRules = {
  ...FILESYSTEM_NAMING_RULES,
  forbiddenCharacters: WINDOWS_FORBIDDEN_CHARACTERS,
  forbiddenTrailing: '. ',
  reservedStems: WINDOWS_RESERVED_STEMS,
  caseInsensitive: true,
  reference: 'Windows file names (Microsoft: Naming Files, Paths, and Namespaces) and the filesystem connector (paths.ts)',
};
