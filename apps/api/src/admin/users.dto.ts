import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayNotEmpty, ArrayUnique, IsArray, IsIn, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { ROLES, USERNAME_PATTERN, type Role } from '../config/config.schema';

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
}

export class UserDto {
  @ApiProperty({ example: 'alice' })
  username!: string;

  @ApiProperty({ enum: ROLES, isArray: true })
  roles!: Role[];

  @ApiProperty({ description: 'Creation time, epoch milliseconds' })
  createdDate!: number;
}
