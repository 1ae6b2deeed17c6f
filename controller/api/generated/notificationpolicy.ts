// Generated from crds/notificationpolicies.yaml by `npm run generate:types`
// (scripts/generate-types.mjs, json-schema-to-typescript). Do not edit: change the CRD and regenerate.

export interface NotificationPolicySchema {
  /**
   * The route tree, quiet hours, inhibit rules, budget and batching of this namespace's
   * notifications.
   */
  spec?: {
    /**
     * The root route, which takes every Event (no matchers, no continue). Its tier, channels, groupBy
     * and intervals are the defaults its child routes inherit; an Event no child route takes gets the
     * root's settings, and with no tier at all it is tier 4 (logged, never sent).
     */
    route: {
      /**
       * Alertmanager matchers that must all match - name op value, op one of = != =~ !~ (regular
       * expressions are anchored at both ends), the value bare or double-quoted, e.g.
       * reason=~"Stalled|JudgeFailed". Names are type, reason, involvedObject.kind,
       * involvedObject.namespace, involvedObject.name and labels.<key> (the involved object's labels).
       * Not on the root route.
       *
       * @maxItems 32
       */
      matchers?: string[];
      /**
       * After this route matched, go on to its next sibling too (by default the first matching route
       * wins). Not on the root route.
       */
      continue?: boolean;
      /**
       * 1 urgent - sent at once, also in quiet hours and past the budget; 2 action - sent at once
       * outside quiet hours, else at their end; 3 summary - batched every batchInterval, sent early with
       * the channel's next tier 1 or 2 message; 4 debug - never sent, only logged and listed. Inherited
       * from the parent route when unset.
       */
      tier?: 1 | 2 | 3 | 4;
      /**
       * Names of NotificationChannels in this namespace the route's messages go to. Inherited when
       * unset.
       *
       * @maxItems 16
       */
      channels?: string[];
      /**
       * Events with the same values of these fields form one group, paced by groupWait and groupInterval
       * (default - the involved object's kind, namespace and name). Field names as in matchers.
       *
       * @maxItems 16
       */
      groupBy?: string[];
      /**
       * How long a new group's first message waits for more of the group, as a Go duration (default 0s,
       * at most 1h). Alertmanager's default is 30s; 0s lets tier 1 reach the receiver within a second.
       */
      groupWait?: string;
      /**
       * Least time between two messages of one group, as a Go duration (default 0s, at most 24h).
       */
      groupInterval?: string;
      /**
       * The same Event (its count bumped by aggregation) is not notified again within this, as a Go
       * duration (default 4h; from 1m to 168h).
       */
      repeatInterval?: string;
      /**
       * Child routes, tried in order; when none matches, this route takes the Event. Each has the fields
       * of this route (matchers, continue, tier, channels, groupBy, groupWait, groupInterval,
       * repeatInterval, routes). The schema cannot describe a recursive tree, so child routes are kept
       * as they are here and checked at apply (admission) with the same rules - unknown fields, types,
       * bounds, matchers and regular expressions - at most 8 levels deep and 256 routes in all.
       *
       * @maxItems 256
       */
      routes?: {
        [k: string]: unknown;
      }[];
    };
    /**
     * IANA time zone of the quiet hours and of the budget's day, such as Europe/Berlin.
     */
    timeZone?: string;
    /**
     * When tier 2 messages wait (they are sent when the quiet hours end; tier 1 is sent anyway).
     * Together they may not cover the whole week.
     *
     * @maxItems 32
     *
     * Items: Quiet from start to end, wall clock in timeZone, on days. A range past midnight (22:00 to 07:00)
     * belongs to the day it starts on.
     */
    quietHours?: {
      /**
       * Weekdays (monday ... sunday) or ranges such as monday:friday; every day when unset.
       *
       * @maxItems 7
       */
      days?: string[];
      /**
       * Start, HH:MM from 00:00 to 23:59.
       */
      start: string;
      /**
       * End, HH:MM from 00:01 to 24:00; earlier than start for a range past midnight.
       */
      end: string;
    }[];
    /**
     * Alertmanager inhibit rules - an Event matching targetMatchers is not notified while an Event
     * matching sourceMatchers is in force with the same values of equal (e.g. Escalated mutes BackOff
     * for the same session).
     *
     * @maxItems 64
     *
     * Items: One inhibit rule.
     */
    inhibit?: {
      /**
       * Named when a notification is suppressed by this rule (default inhibit[i]).
       */
      name?: string;
      /**
       * Matchers of the muting Event, as in routes.
       *
       * @minItems 1
       * @maxItems 32
       */
      sourceMatchers: string[];
      /**
       * Matchers of the muted Event, as in routes.
       *
       * @minItems 1
       * @maxItems 32
       */
      targetMatchers: string[];
      /**
       * Fields whose values must be equal on source and target, as in groupBy.
       *
       * @maxItems 16
       */
      equal?: string[];
    }[];
    /**
     * Messages per channel per day (a NotificationChannel's own dailyBudget wins). Past it tier 2 and
     * 3 go to the digest instead (never dropped) and tier 1 is still sent; a Warning is recorded at 80
     * %.
     */
    dailyBudget?: number;
    /**
     * How often a channel's batch of tier 3 messages is sent, as a Go duration (from 1m to 24h).
     */
    batchInterval?: string;
    /**
     * The digest (seed 002 section 2.6) - runs started, succeeded and failed, evaluations with their
     * scores, escalations, autopilot decisions, sessions waiting for input, the notifications deferred
     * to it and the budget used since the last one, sent on a cron schedule. It is on unless enabled
     * is false - past the daily budget, tier 2 and 3 wait for it. An LLM may write a short narrative
     * on top; on any failure the template is sent alone, and the deferred notifications are always
     * listed.
     */
    digest?: {
      /**
       * Send the digest (default true).
       */
      enabled?: boolean;
      /**
       * When, as a 5-field cron expression (minute hour day-of-month month day-of-week) read in
       * timeZone, or @daily, @weekly. At most one digest an hour - the minute field is one number.
       * Default 0 7 * * * (07:00 every day).
       */
      schedule?: string;
      /**
       * IANA time zone of the schedule, such as Europe/Berlin (default the policy's timeZone).
       */
      timeZone?: string;
      /**
       * Names of the NotificationChannels the digest goes to (default the root route's channels).
       *
       * @maxItems 16
       */
      channels?: string[];
      /**
       * Most characters of the digest's text; each channel's own limit applies too (Slack 2800, ntfy
       * 3500, command 4000, email and JSON webhook 16000).
       */
      maxLength?: number;
      /**
       * The LLM that writes the digest's narrative, configured as the judge's backend in a SessionPolicy
       * (fail-safe the same way - bounded retries, one repair, untrusted text fenced as data). Unset, or
       * backend heuristic - the template alone. Secrets never go here - apiKeyEnv names the environment
       * variable that holds the key.
       */
      llm?: {
        /**
         * heuristic (no narrative, the template alone); command runs a CLI with the prompt on stdin and
         * reads JSON from stdout; openai calls an OpenAI-compatible /v1/chat/completions (OpenAI, Ollama,
         * vLLM, llama.cpp server); anthropic calls the Anthropic Messages API.
         */
        backend?: 'heuristic' | 'command' | 'openai' | 'anthropic';
        /**
         * Model name sent to the openai and anthropic backends (required for them), and substituted for
         * {{model}} in command.
         */
        model?: string;
        /**
         * Base URL of the API. openai - up to and including /v1 (default https://api.openai.com/v1; Ollama
         * http://127.0.0.1:11434/v1). anthropic - without /v1 (default https://api.anthropic.com).
         */
        endpoint?: string;
        /**
         * For the command backend, the program and its arguments, run without a shell. The prompt arrives
         * on stdin; {{schema}} in an argument is replaced by the JSON Schema of the answer and {{model}}
         * by model.
         *
         * @minItems 1
         * @maxItems 64
         */
        command?: string[];
        /**
         * Name of the controller's environment variable that holds the API key (default ANTHROPIC_API_KEY
         * for anthropic, OPENAI_API_KEY for openai). The key itself is never stored in an object.
         */
        apiKeyEnv?: string;
        /**
         * Time limit of one request to the backend, as a Go duration (default 60s, at most 10m). The whole
         * narrative is bounded too - past it the template is sent alone.
         */
        timeout?: string;
        /**
         * Retries of a request that timed out, was rate limited or failed with a server or network error,
         * with exponential backoff (default 2). An answer that does not match gets one repair request
         * besides.
         */
        maxRetries?: number;
      };
    };
  };
  /**
   * Written by the notifier.
   */
  status?: {
    /**
     * The store revision up to which this policy's Events have been routed (its cursor).
     */
    eventRevision?: string;
    /**
     * Per channel, the day (YYYY-MM-DD) its 80 % budget warning was given for.
     */
    budgetWarned?: {
      [k: string]: string;
    };
    /**
     * When the last digest was recorded; the next one covers the time since.
     */
    lastDigestAt?: string;
    /**
     * The `orchctl digest --now` request (annotation value) the last digest answered.
     */
    lastDigestRequest?: string;
  };
}
export type NotificationPolicySchemaSpec = NonNullable<NotificationPolicySchema['spec']>;
export type NotificationPolicySchemaStatus = NonNullable<NotificationPolicySchema['status']>;
