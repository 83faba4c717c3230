/**
 * The Graph simulator's fidelity check: every JSON body it sends is validated against the schema
 * bundle built from Microsoft's published v1.0 metadata (graph-v1.0-drive-schemas.json, copied from
 * the shared reference; provenance in its `x-source`), with ajv 8 in the 2020-12 dialect — code no
 * one here wrote. Violations are recorded, not thrown: the answer still goes out (the client under
 * test sees what a wrong simulator would send) and the tests fail on GET /_simulator/violations.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

export interface Violation {
  at: string;
  method: string;
  path: string;
  schema: string;
  errors: string[];
}

const NO_OP_FORMATS = ['int16', 'int32', 'int64', 'base64url', 'double', 'float', 'decimal', 'uint8', 'int8'];

export class SchemaChecker {
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  readonly violations: Violation[] = [];
  /** How many bodies were checked (a test asserts the check actually ran). */
  checked = 0;

  constructor(bundleFile = path.join(__dirname, 'graph-v1.0-drive-schemas.json')) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    for (const format of NO_OP_FORMATS) this.ajv.addFormat(format, true);
    this.ajv.addSchema(JSON.parse(fs.readFileSync(bundleFile, 'utf8')) as object, 'graph');
  }

  private validator(schema: string): ValidateFunction {
    let validate = this.validators.get(schema);
    if (!validate) {
      const found = this.ajv.getSchema(`graph#/components/schemas/${schema}`);
      if (!found) throw new Error(`no schema ${schema} in the Graph bundle`);
      validate = found;
      this.validators.set(schema, validate);
    }
    return validate;
  }

  /** Validates `body` against `microsoft.graph.<schema>`; records a violation when it does not fit. */
  check(schema: string, body: unknown, method: string, requestPath: string): void {
    this.checked++;
    const validate = this.validator(schema);
    if (validate(body)) return;
    this.violations.push({
      at: new Date().toISOString(),
      method,
      path: requestPath,
      schema,
      errors: (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`),
    });
  }
}
