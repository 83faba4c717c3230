import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayNotEmpty, ArrayUnique, IsArray, IsIn, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { GROUP_PATTERN, MAX_GROUPS, ROLES, USERNAME_PATTERN, type Role } from '../config/config.schema';

const GROUPS_MESSAGE = 'each group must be 1-128 letters, digits or _ . @ -, starting with a letter or digit';

/** `groups` of create and change: principals that permission-trimmed search matches in `acl_read`. */
function Groups(): PropertyDecorator {
  return (target, key) => {
    ApiPropertyOptional({ type: [String], example: ['finance', 'staff'], maxItems: MAX_GROUPS, description: 'Groups of the user: principals, besides the user name and `__everyone__`, that permission-trimmed search matches in `acl_read`' })(target, key);
    IsOptional()(target, key);
    IsArray()(target, key);
    ArrayMaxSize(MAX_GROUPS)(target, key);
    ArrayUnique()(target, key);
    IsString({ each: true })(target, key);
    Matches(GROUP_PATTERN, { each: true, message: GROUPS_MESSAGE })(target, key);
  };
}

export class CreateUserDto {
  @ApiProperty({ example: 'alice', pattern: USERNAME_PATTERN.source })
  @IsString()
  @Matches(USERNAME_PATTERN, { message: 'username must be 1-128 letters, digits or _ . @ -, starting with a letter or digit' })
  username!: string;

  @ApiProperty({ example: 'correct horse battery staple', minLength: 8, maxLength: 1024 })
  @IsString()
  @MinLength(8)
  @MaxLength(1024)
  password!: string;

  @ApiProperty({ enum: ROLES, isArray: true, example: ['user'] })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayUnique()
  @IsIn(ROLES, { each: true, message: `each role must be one of ${ROLES.join(', ')}` })
  roles!: Role[];

  @Groups()
  groups?: string[];
}

export class UpdateUserDto {
  @ApiPropertyOptional({ example: 'another horse battery staple', minLength: 8, maxLength: 1024 })
  @IsOptional()
  @IsString()
  @MinLength(8)
  @MaxLength(1024)
  password?: string;

  @ApiPropertyOptional({ enum: ROLES, isArray: true, example: ['user'], minItems: 1 })
  @IsOptional()
  @IsArray()
  @ArrayNotEmpty()
  @ArrayUnique()
  @IsIn(ROLES, { each: true, message: `each role must be one of ${ROLES.join(', ')}` })
  roles?: Role[];

  @Groups()
  groups?: string[];
}

export class UserDto {
  @ApiProperty({ example: 'alice' })
  username!: string;

  @ApiProperty({ enum: ROLES, isArray: true })
  roles!: Role[];

  @ApiProperty({ type: [String], description: 'Groups of the user (principals of permission-trimmed search)' })
  groups!: string[];

  @ApiProperty({ description: 'Creation time, epoch milliseconds' })
  createdDate!: number;
}
