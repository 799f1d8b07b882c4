/**
 * RFC 8693 token exchange at the company identity provider: the person's own access token at
 * the provider becomes a token the provider issues for a backend (`userToken.kind: exchange`),
 * audience-bound to it. The request is oauth4webapi's generic token endpoint request, as
 * Gatehouse's client at the provider; its failures are told apart by what the person can do:
 * a refusal ("refused": not allowed, or their sign-in no longer counts), a provider that could
 * not be reached or answered 5xx ("unreachable": try again), anything else ("invalid_response").
 */
import * as oauth from "oauth4webapi";
import { type ExchangedToken, type ExchangeRequest, IdpError } from "./provider.ts";

export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";

/** One exchange; `send` is the provider's bounded call (its timeout and http allowance). */
export async function exchangeAtProvider(
  as: oauth.AuthorizationServer,
  client: oauth.Client,
  clientAuth: oauth.ClientAuth,
  send: <T>(
    work: (options: { [oauth.allowInsecureRequests]: boolean; signal: AbortSignal }) => Promise<T>,
  ) => Promise<T>,
  subjectToken: string,
  request: ExchangeRequest,
): Promise<ExchangedToken> {
  const parameters = new URLSearchParams({
    subject_token: subjectToken,
    subject_token_type: ACCESS_TOKEN_TYPE,
    requested_token_type: ACCESS_TOKEN_TYPE,
    audience: request.audience,
  });
  if (request.scopes.length > 0) parameters.set("scope", request.scopes.join(" "));
  if (request.resource !== undefined) parameters.set("resource", request.resource);
  try {
    const result = await send(async (options) =>
      await oauth.processGenericTokenEndpointResponse(
        as,
        client,
        await oauth.genericTokenEndpointRequest(
          as,
          client,
          clientAuth,
          TOKEN_EXCHANGE_GRANT,
          parameters,
          options,
        ),
      )
    );
    return {
      token: result.access_token,
      ...(typeof result.expires_in === "number" && { expiresIn: result.expires_in }),
    };
  } catch (error) {
    throw exchangeError(error, subjectToken);
  }
}

/** What a provider's error_description may grow to in a person's error and the logs. */
const DESCRIPTION_LIMIT = 200;

/**
 * A provider's own words, fit to pass on: bounded, and without `secret` (the person's token it
 * was sent, which a careless provider may echo) should they hold it.
 */
export function providerWords(text: string, secret?: string): string {
  const masked = secret ? text.replaceAll(secret, "[their token]") : text;
  return masked.length > DESCRIPTION_LIMIT
    ? `${masked.slice(0, DESCRIPTION_LIMIT).trimEnd()}…`
    : masked;
}

/** A failed exchange as the person's case: refused, unreachable, or not understood. */
export function exchangeError(error: unknown, subjectToken?: string): IdpError {
  const message = providerWords((error as Error).message, subjectToken);
  if (error instanceof oauth.ResponseBodyError && error.status < 500) {
    return new IdpError(
      "refused",
      `the identity provider refused the token exchange: ${providerWords(error.error)}${
        error.error_description ? ` (${providerWords(error.error_description, subjectToken)})` : ""
      }`,
    );
  }
  const status = error instanceof oauth.ResponseBodyError
    ? error.status
    : error instanceof oauth.OperationProcessingError && error.cause instanceof Response
    ? error.cause.status
    : undefined;
  if (status === 401 || status === 403) {
    return new IdpError("refused", `the identity provider refused the token exchange (${status})`);
  }
  if (status === undefined || status >= 500) {
    if (!(error instanceof oauth.OperationProcessingError) || status !== undefined) {
      return new IdpError(
        "unreachable",
        `the identity provider could not be asked for a token: ${message}`,
      );
    }
  }
  return new IdpError(
    "invalid_response",
    `the identity provider's answer to a token exchange could not be accepted: ${message}`,
  );
}
