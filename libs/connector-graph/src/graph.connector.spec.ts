import { decodeFieldName, encodeFieldName } from './graph.connector';

describe('SharePoint field names', () => {
  it.each([
    ['department', 'department'],
    ['ref.code', 'ref_x002e_code'],
    ['a:b-c', 'a_x003a_b_x002d_c'],
    ['under_score', 'under_score'],
  ])('writes %s as %s and reads it back', (name, field) => {
    expect(encodeFieldName(name)).toBe(field);
    expect(decodeFieldName(field)).toBe(name);
  });
});
