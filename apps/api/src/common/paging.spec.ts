import { nextPageUrl } from './paging';

describe('nextPageUrl', () => {
  it('keeps the path and the other parameters, and sets cursor', () => {
    expect(nextPageUrl('/gateway/api/repo/fs/folderitems?id=fs-abc&limit=2', 'Y3Vy')).toBe('/gateway/api/repo/fs/folderitems?id=fs-abc&limit=2&cursor=Y3Vy');
  });

  it('replaces the cursor of the current page instead of repeating it', () => {
    expect(nextPageUrl('/api/repo/fs/folderitems?cursor=old&id=x&limit=2', 'new')).toBe('/api/repo/fs/folderitems?cursor=new&id=x&limit=2');
  });
});
