import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBasicAuth, ApiBody, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { CurrentUser, type AuthenticatedUser } from '../auth/auth.decorators';
import { ApiEnvelope, ApiErrors } from '../common/openapi';
import { ACL_BODY_SCHEMA, ACL_ENTRY_SCHEMA, AclDeleteQuery, AclItemQuery } from './permissions.dto';
import { PermissionsService } from './permissions.service';

@ApiTags('Permission management')
@ApiBasicAuth()
@ApiParam({ name: 'connectorId', description: 'Connector id (see Get connections)', example: 'cmis' })
@ApiErrors(400, 401, 404, 501, 502, 503, 504)
@Controller('repo/:connectorId/acls')
export class PermissionsController {
  constructor(private readonly permissions: PermissionsService) {}

  @Get()
  @ApiOperation({
    summary: 'Get ACLs',
    description: 'The access-control entries of the item, one per principal: `<principal>:<permission>[,<permission>...]`. Capability `acls` (501 without it).',
  })
  @ApiEnvelope(ACL_ENTRY_SCHEMA, { isArray: true })
  get(@Param('connectorId') connectorId: string, @Query() query: AclItemQuery): Promise<string[]> {
    return this.permissions.get(connectorId, query.id);
  }

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Post ACLs',
    description:
      'Adds each principal of the body with the permissions given; a principal that already has permissions on the item gets exactly those ' +
      'given instead. Answers the resulting entries. Permission names are the repository\'s (CMIS: cmis:read, cmis:write, cmis:all, ...). Capability `acls`.',
  })
  @ApiBody({ required: true, schema: ACL_BODY_SCHEMA })
  @ApiEnvelope(ACL_ENTRY_SCHEMA, { isArray: true })
  @ApiErrors(403, 409)
  post(
    @Param('connectorId') connectorId: string,
    @Query() query: AclItemQuery,
    @Body() body: unknown,
    @CurrentUser() user: AuthenticatedUser,
  ): Promise<string[]> {
    return this.permissions.post(connectorId, query.id, body, user);
  }

  @Delete()
  @ApiOperation({
    summary: 'Delete ACLs',
    description:
      'Removes every entry of the principals named by `aclId` (comma-delimited; `acls` is accepted as an alias). Answers the removed principals, ' +
      'comma-delimited (principals without entries are left out). Afterwards Get ACLs no longer lists them. Capability `acls`.',
  })
  @ApiEnvelope({ type: 'string', example: 'alice,finance-team' })
  @ApiErrors(403, 409)
  delete(@Param('connectorId') connectorId: string, @Query() query: AclDeleteQuery, @CurrentUser() user: AuthenticatedUser): Promise<string> {
    return this.permissions.delete(connectorId, query, user);
  }
}
