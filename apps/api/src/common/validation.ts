import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
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
    // The failed object's class tells a list validated element by element from a repeated parameter
    // (checksEachElement); the factory below puts only a parameter name and a message in the answer.
    validationError: { target: true, value: true },
    exceptionFactory: (errors: ValidationError[]) => {
      const [parameter, message] = firstError(errors, '');
      return new InvalidArgumentError(parameter, message);
    },
  });
}

/**
 * Constraints that say what kind of value was expected, checked first: a value of the wrong kind
 * fails every other constraint too, and "must be shorter than 4096 characters" for a repeated
 * parameter (an array) or "must not be greater than 10000" for `%00` would hide the real mistake.
 * class-validator lists constraints in reverse declaration order, so the order cannot be left to it.
 */
const KIND_CONSTRAINTS = ['isDefined', 'isObject', 'isString', 'isInt', 'isNumber', 'isBoolean', 'isArray', 'isIn', 'isEnum'];
const SCALAR_CONSTRAINTS = new Set(['isString', 'isInt', 'isNumber', 'isBoolean', 'isIn', 'isEnum']);

function firstError(errors: ValidationError[], prefix: string): [string, string] {
  for (const e of errors) {
    const name = prefix ? (/^\d+$/.test(e.property) ? `${prefix}[${e.property}]` : `${prefix}.${e.property}`) : e.property;
    if (e.constraints) return [name, `Invalid parameter '${name}': ${constraintMessage(e, e.constraints)}`];
    if (e.children?.length) return firstError(e.children, name);
  }
  return ['body', 'Invalid request'];
}

function constraintMessage(e: ValidationError, constraints: Record<string, string>): string {
  // An absent value fails only a property without @IsOptional: say it is missing, not that it has the wrong type.
  if (e.value === undefined) return constraints.isDefined?.includes('is required') ? constraints.isDefined : `${e.property} is required`;
  const kind = KIND_CONSTRAINTS.find((c) => c in constraints);
  // A query parameter given twice arrives as an array; a list checked element by element (each: true) is no such mistake.
  if (kind && SCALAR_CONSTRAINTS.has(kind) && Array.isArray(e.value) && !checksEachElement(e)) return `${e.property} must be given once, as a single value (got a list of ${e.value.length})`;
  return kind ? constraints[kind] : Object.values(constraints)[0];
}

/** Whether the failed property is validated element by element (`@IsIn(ROLES, { each: true })`): a list is what it takes. */
function checksEachElement(e: ValidationError): boolean {
  const target = (e.target as object | undefined)?.constructor;
  if (!target) return false;
  return getMetadataStorage()
    .getTargetValidationMetadatas(target, '', true, false)
    .some((m) => m.propertyName === e.property && m.each === true);
}
