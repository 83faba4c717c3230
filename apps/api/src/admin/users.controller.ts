import { Body, Delete, Get, Param, Patch, Post } from '@nestjs/common';
import { CurrentUser, type AuthenticatedUser } from '../auth/auth.decorators';
import { UsersService } from '../auth/users.service';
import { Route, RouteFamily } from '../common/routes';
import { CreateUserDto, UpdateUserDto, UserDto } from './users.dto';

@RouteFamily('admin/users', { tag: 'Administration', access: 'basic', roles: ['admin'] })
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Post()
  @Route({ summary: 'Create a user', results: UserDto, status: 201, errors: [400, 409] })
  create(@Body() body: CreateUserDto): Promise<UserDto> {
    return this.users.create(body.username, body.password, body.roles, body.groups);
  }

  @Get()
  @Route({ summary: 'List users', results: UserDto, isArray: true })
  list(): Promise<UserDto[]> {
    return this.users.list();
  }

  @Patch(':username')
  @Route({
    summary: 'Change a user',
    description: 'Sets the password, the roles and/or the groups. Cached verifications of the user end at once, on every node.',
    results: UserDto,
    errors: [400, 404],
  })
  update(@Param('username') username: string, @Body() body: UpdateUserDto): Promise<UserDto> {
    return this.users.update(username, { password: body.password, roles: body.roles, groups: body.groups });
  }

  @Delete(':username')
  @Route({
    summary: 'Delete a user',
    description: 'Returns the deleted user. An administrator cannot delete their own account.',
    results: UserDto,
    errors: [400, 404],
  })
  delete(@Param('username') username: string, @CurrentUser() user: AuthenticatedUser): Promise<UserDto> {
    return this.users.delete(username, user.username);
  }
}
