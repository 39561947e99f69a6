/** Card numbers: Luhn check, brand detection and Stripe's test numbers with their outcomes. */
import type { CardOutcome } from './sandbox-entities.ts';

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

export function cardBrand(number: string): string {
  if (/^4/.test(number)) return 'visa';
  if (/^(5[1-5]|2(2[2-9]|[3-6]\d|7[01]|720))/.test(number)) return 'mastercard';
  if (/^3[47]/.test(number)) return 'amex';
  if (/^(6011|65|64[4-9])/.test(number)) return 'discover';
  return 'unknown';
}

/** Stripe's documented test card numbers (test mode); any other number is refused as a live card. */
export const TEST_CARDS: Record<string, CardOutcome> = {
  '4242424242424242': 'succeed',
  '4000056655665556': 'succeed',
  '5555555555554444': 'succeed',
  '2223003122003222': 'succeed',
  '378282246310005': 'succeed',
  '6011111111111117': 'succeed',
  '4000000000000002': 'generic_decline',
  '4000000000009995': 'insufficient_funds',
  '4000000000000069': 'expired_card',
  '4000000000000127': 'incorrect_cvc',
  // Attaching succeeds, every later charge fails: what renewals and dunning are tested with.
  '4000000000000341': 'charge_fails',
};

/** Stripe's test confirmation tokens, reusable any number of times. */
export const TEST_TOKENS: Record<string, { brand: string; last4: string; outcome: CardOutcome }> = {
  tok_visa: { brand: 'visa', last4: '4242', outcome: 'succeed' },
  tok_mastercard: { brand: 'mastercard', last4: '4444', outcome: 'succeed' },
  tok_chargeDeclined: { brand: 'visa', last4: '0002', outcome: 'generic_decline' },
  tok_chargeDeclinedInsufficientFunds: { brand: 'visa', last4: '9995', outcome: 'insufficient_funds' },
  tok_chargeDeclinedExpiredCard: { brand: 'visa', last4: '0069', outcome: 'expired_card' },
  tok_chargeCustomerFail: { brand: 'visa', last4: '0341', outcome: 'charge_fails' },
};

/** Stripe's wording for each refusal. */
export const DECLINES: Record<Exclude<CardOutcome, 'succeed'>, { code: string; declineCode: string; message: string }> = {
  generic_decline: { code: 'card_declined', declineCode: 'generic_decline', message: 'Your card was declined.' },
  insufficient_funds: { code: 'card_declined', declineCode: 'insufficient_funds', message: 'Your card has insufficient funds.' },
  expired_card: { code: 'expired_card', declineCode: 'expired_card', message: 'Your card has expired.' },
  incorrect_cvc: { code: 'incorrect_cvc', declineCode: 'incorrect_cvc', message: "Your card's security code is incorrect." },
  charge_fails: { code: 'card_declined', declineCode: 'generic_decline', message: 'Your card was declined.' },
  test_mode_live_card: {
    code: 'card_declined',
    declineCode: 'test_mode_live_card',
    message: 'Your card was declined. Your request was in test mode, but used a non test card.',
  },
};
