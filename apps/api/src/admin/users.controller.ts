import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBasicAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser, Roles, type AuthenticatedUser } from '../auth/auth.decorators';
import { UsersService } from '../auth/users.service';
import { ApiEnvelope, ApiErrors } from '../common/openapi';
import { CreateUserDto, UserDto } from './users.dto';

@ApiTags('Administration')
@ApiBasicAuth()
@ApiErrors(401, 403)
@Roles('admin')
@Controller('admin/users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Create a user' })
  @ApiEnvelope(UserDto, { status: 201 })
  @ApiErrors(400, 409)
  create(@Body() body: CreateUserDto): Promise<UserDto> {
    return this.users.create(body.username, body.password, body.roles);
  }

  @Get()
  @ApiOperation({ summary: 'List users' })
  @ApiEnvelope(UserDto, { isArray: true })
  list(): Promise<UserDto[]> {
    return this.users.list();
  }

  @Delete(':username')
  @ApiOperation({ summary: 'Delete a user', description: 'Returns the deleted user. An administrator cannot delete their own account.' })
  @ApiEnvelope(UserDto)
  @ApiErrors(400, 404)
  delete(@Param('username') username: string, @CurrentUser() user: AuthenticatedUser): Promise<UserDto> {
    return this.users.delete(username, user.username);
  }
}
