/** The answers a buyer gives to the custom fields attached to a checkout's product: validated by field type, kept only for that product. */
import { RequestValidationError, type ValidationIssue } from '../../kit/errors.ts';
import { Product } from '../products/entities.ts';
import { type CustomFieldData } from './entities.ts';

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Checks answers against the product's attached custom fields (type, select options, number and
 * date bounds, text lengths; with `enforceRequired`, required fields must be answered and required
 * checkboxes checked). Unknown slugs are dropped. All problems at once, 422 at
 * `body.custom_field_data.<slug>`.
 */
export function validateCustomFieldData(
  product: Product,
  data: Record<string, unknown>,
  enforceRequired: boolean,
): CustomFieldData {
  const out: CustomFieldData = {};
  const issues: ValidationIssue[] = [];
  for (const attached of product.attachedCustomFields.getItems()) {
    const field = attached.customField;
    if (field.deletedAt) continue;
    const slug = field.slug;
    const loc = ['body', 'custom_field_data', slug];
    const value = data[slug];
    const fail = (msg: string, type = 'value_error') => issues.push({ type, loc, msg, input: value });
    const empty = value === undefined || value === null || value === '';
    if (empty) {
      if (enforceRequired && attached.required) issues.push({ type: 'missing', loc, msg: 'Field required' });
      else if (value !== undefined) out[slug] = null;
      continue;
    }
    const props = field.properties;
    switch (field.type) {
      case 'text': {
        if (typeof value !== 'string') {
          fail('Input should be a valid string', 'string_type');
          break;
        }
        if (props.min_length != null && value.length < props.min_length) {
          fail(`String should have at least ${props.min_length} characters`, 'string_too_short');
        } else if (props.max_length != null && value.length > props.max_length) {
          fail(`String should have at most ${props.max_length} characters`, 'string_too_long');
        } else out[slug] = value;
        break;
      }
      case 'number': {
        if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
          fail('Input should be a valid integer', 'int_type');
          break;
        }
        if (props.ge != null && value < props.ge) fail(`Input should be greater than or equal to ${props.ge}`, 'greater_than_equal');
        else if (props.le != null && value > props.le) fail(`Input should be less than or equal to ${props.le}`, 'less_than_equal');
        else out[slug] = value;
        break;
      }
      case 'date': {
        const ok = typeof value === 'string' && (ISO_DATE.test(value) || ISO_DATETIME.test(value)) && !Number.isNaN(Date.parse(value));
        if (!ok) {
          fail('Input should be a valid date or datetime', 'date_type');
          break;
        }
        const seconds = Math.floor(Date.parse(value as string) / 1000);
        if (props.ge != null && seconds < props.ge) fail(`Date should be on or after ${new Date(props.ge * 1000).toISOString()}`, 'greater_than_equal');
        else if (props.le != null && seconds > props.le) fail(`Date should be on or before ${new Date(props.le * 1000).toISOString()}`, 'less_than_equal');
        else out[slug] = value as string;
        break;
      }
      case 'checkbox': {
        if (typeof value !== 'boolean') fail('Input should be a valid boolean', 'bool_type');
        else if (enforceRequired && attached.required && !value) fail('This box must be checked', 'value_error');
        else out[slug] = value;
        break;
      }
      case 'select': {
        const options = props.options ?? [];
        if (typeof value !== 'string' || !options.some((o) => o.value === value)) {
          fail(`Input should be ${options.map((o) => `'${o.value}'`).join(', ')}`, 'enum');
        } else out[slug] = value;
        break;
      }
    }
  }
  if (issues.length) throw new RequestValidationError(issues);
  return out;
}

/** Keeps only the answers that belong to `product`'s fields (after a product switch). */
export function keepAnswersFor(product: Product, data: CustomFieldData): CustomFieldData {
  const slugs = new Set(product.attachedCustomFields.getItems().map((a) => a.customField.slug));
  return Object.fromEntries(Object.entries(data).filter(([k]) => slugs.has(k)));
}

// ---------------------------------------------------------------------------------------------
// Create
