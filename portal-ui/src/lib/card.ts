/** Card numbers in the sandbox card form: brand detection, grouping, Luhn and expiry checks. */

export function digitsOf(s: string): string {
  return s.replace(/\D/g, '');
}

export function luhnValid(number: string): boolean {
  if (!/^\d{12,19}$/.test(number)) return false;
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let d = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

export type Brand = 'visa' | 'mastercard' | 'amex' | 'discover' | 'unknown';

export function cardBrand(number: string): Brand {
  if (/^4/.test(number)) return 'visa';
  if (/^(5[1-5]|2(2[2-9]|[3-6]\d|7[01]|720))/.test(number)) return 'mastercard';
  if (/^3[47]/.test(number)) return 'amex';
  if (/^(6011|65|64[4-9])/.test(number)) return 'discover';
  return 'unknown';
}

export const BRAND_NAMES: Record<string, string> = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  amex: 'American Express',
  discover: 'Discover',
  unknown: 'Card',
};

/** "4242 4242 4242 4242"; American Express as 4-6-5. */
export function formatCardNumber(input: string): string {
  const d = digitsOf(input).slice(0, 19);
  if (cardBrand(d) === 'amex') return [d.slice(0, 4), d.slice(4, 10), d.slice(10, 15)].filter(Boolean).join(' ');
  return d.replace(/(\d{4})(?=\d)/g, '$1 ');
}

/** "12 / 34" while typing. */
export function formatExpiry(input: string): string {
  let d = digitsOf(input).slice(0, 4);
  if (d.length === 1 && Number(d) > 1) d = `0${d}`;
  return d.length > 2 ? `${d.slice(0, 2)} / ${d.slice(2)}` : d;
}

export interface CardInput {
  number: string;
  expiry: string;
  cvc: string;
}

export const emptyCard: CardInput = { number: '', expiry: '', cvc: '' };

/** Errors keyed `card_number`, `card_expiry`, `card_cvc`; empty when the card can be sent. */
export function validateCard(card: CardInput, now = new Date()): Record<string, string> {
  const errors: Record<string, string> = {};
  const number = digitsOf(card.number);
  if (!number) errors.card_number = 'Enter your card number.';
  else if (!luhnValid(number)) errors.card_number = 'Your card number is invalid.';
  const exp = digitsOf(card.expiry);
  if (exp.length !== 4) errors.card_expiry = 'Enter the expiry date as MM / YY.';
  else {
    const month = Number(exp.slice(0, 2));
    const year = 2000 + Number(exp.slice(2));
    if (month < 1 || month > 12) errors.card_expiry = 'Your card’s expiry month is invalid.';
    else if (year < now.getFullYear() || (year === now.getFullYear() && month < now.getMonth() + 1)) {
      errors.card_expiry = 'Your card’s expiration date is in the past.';
    }
  }
  const cvcLength = cardBrand(number) === 'amex' ? 4 : 3;
  if (!new RegExp(`^\\d{${cvcLength}}$`).test(card.cvc)) errors.card_cvc = `Enter the ${cvcLength}-digit security code.`;
  return errors;
}

export function expiryParts(expiry: string): { exp_month: number; exp_year: number } {
  const d = digitsOf(expiry);
  return { exp_month: Number(d.slice(0, 2)), exp_year: 2000 + Number(d.slice(2, 4)) };
}

export const TEST_CARDS: { number: string; outcome: string }[] = [
  { number: '4242 4242 4242 4242', outcome: 'Succeeds' },
  { number: '4000 0000 0000 0002', outcome: 'Declined' },
  { number: '4000 0000 0000 9995', outcome: 'Insufficient funds' },
  { number: '4000 0000 0000 0069', outcome: 'Expired card' },
  { number: '4000 0000 0000 0341', outcome: 'Saves, later charges fail' },
];
