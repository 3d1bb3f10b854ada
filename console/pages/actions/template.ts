/**
 * A new action's starting source: the guide's shape (`handler(event, context)` returning
 * `statusCode` and `body`), reading one declared parameter, so it runs as it is.
 */
export const ACTION_TEMPLATE = `def handler(event, context):
    # Parameters arrive in event: JSON values when run with POST (the Run tab), strings with GET.
    # event["keys"] holds your stored keys named in "Keys needed".
    name = event.get("name") or "world"
    return {
        "statusCode": 200,
        "body": {"greeting": "Hello, " + name + "!", "msLeft": context.get_remaining_time_in_millis()},
    }
`;

/** The parameter the template reads. */
export const TEMPLATE_PARAMETERS = [{ name: 'name', type: 'string', required: false }] as const;

/** Parameter types the console offers (the API takes any word; these are the ones the run form knows). */
export const PARAMETER_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array'] as const;
