import { Body, Delete, Get, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiParam } from '@nestjs/swagger';
import { CurrentUser, type AuthenticatedUser } from '../auth/auth.decorators';
import { Route, RouteFamily } from '../common/routes';
import { ACL_BODY_SCHEMA, ACL_ENTRY_SCHEMA, AclBodyPipe, AclDeleteQuery, AclItemQuery, type AclEntries } from './permissions.dto';
import { PermissionsService } from './permissions.service';

@RouteFamily('repo/:connectorId/acls', { tag: 'Permission management', access: 'basic', errors: [400, 404, 501, 502, 503, 504] })
@ApiParam({ name: 'connectorId', description: 'Connector id (see Get connections)', example: 'cmis' })
export class PermissionsController {
  constructor(private readonly permissions: PermissionsService) {}

  @Get()
  @Route({
    summary: 'Get ACLs',
    description: 'The access-control entries of the item, one per principal: `<principal>:<permission>[,<permission>...]`. Capability `acls` (501 without it).',
    results: ACL_ENTRY_SCHEMA,
    isArray: true,
  })
  get(@Param('connectorId') connectorId: string, @Query() query: AclItemQuery): Promise<string[]> {
    return this.permissions.get(connectorId, query.id);
  }

  @Post()
  @ApiBody({ required: true, schema: ACL_BODY_SCHEMA })
  @Route({
    summary: 'Post ACLs',
    description:
      'Adds each principal of the body with the permissions given; a principal that already has permissions on the item gets exactly those ' +
      'given instead. Answers the resulting entries. Permission names are the repository\'s (CMIS: cmis:read, cmis:write, cmis:all, ...). Capability `acls`.',
    results: ACL_ENTRY_SCHEMA,
    isArray: true,
    errors: [403, 409],
  })
  post(
    @Param('connectorId') connectorId: string,
    @Query() query: AclItemQuery,
    @Body(AclBodyPipe) entries: AclEntries,
    @CurrentUser() user: AuthenticatedUser,
  ): Promise<string[]> {
    return this.permissions.post(connectorId, query.id, entries, user);
  }

  @Delete()
  @Route({
    summary: 'Delete ACLs',
    description:
      'Removes every entry of the principals named by `aclId` (comma-delimited; `acls` is accepted as an alias). Answers the removed principals, ' +
      'comma-delimited (principals without entries are left out). Afterwards Get ACLs no longer lists them. A principal the item only ' +
      'inherits (SharePoint, Graph, CMIS) is a 409 naming where it is inherited from, unless `breakInheritance=true`. Capability `acls`.',
    results: { type: 'string', example: 'alice,finance-team' },
    errors: [403, 409],
  })
  delete(@Param('connectorId') connectorId: string, @Query() query: AclDeleteQuery, @CurrentUser() user: AuthenticatedUser): Promise<string> {
    return this.permissions.delete(connectorId, query, user);
  }
}
