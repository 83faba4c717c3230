import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { InvalidArgumentError } from '@gateway/errors';

/**
 * One pipe for every DTO: transforms query strings to their declared types and
 * turns the first failure into an InvalidArgumentError naming the parameter.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: false,
    exceptionFactory: (errors: ValidationError[]) => {
      const [parameter, message] = firstError(errors, '');
      return new InvalidArgumentError(parameter, message);
    },
  });
}

function firstError(errors: ValidationError[], prefix: string): [string, string] {
  for (const e of errors) {
    const name = prefix ? (/^\d+$/.test(e.property) ? `${prefix}[${e.property}]` : `${prefix}.${e.property}`) : e.property;
    if (e.constraints) {
      const msg = Object.values(e.constraints)[0];
      return [name, `Invalid parameter '${name}': ${msg}`];
    }
    if (e.children?.length) return firstError(e.children, name);
  }
  return ['body', 'Invalid request'];
}
