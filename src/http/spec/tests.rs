//! Unit tests of the published document's passes.

use super::*;

#[test]
fn upper_case_header_names_get_their_conventional_spelling() {
    assert_eq!(
        conventional_header_name("X-CORRELATION-ID"),
        "X-Correlation-Id"
    );
    assert_eq!(conventional_header_name("LOCATION"), "Location");
    assert_eq!(
        conventional_header_name("WWW-Authenticate"),
        "WWW-Authenticate"
    );
}

#[test]
fn nullable_becomes_a_null_type() {
    let mut schema = json!({"properties": {
        "a": {"type": "string", "nullable": true},
        "b": {"allOf": [{"$ref": "#/components/schemas/X"}], "nullable": true}
    }});
    rewrite_nullable(&mut schema);
    assert_eq!(
        schema["properties"]["a"],
        json!({"type": ["string", "null"]})
    );
    assert_eq!(
        schema["properties"]["b"],
        json!({"anyOf": [{"type": "null"}, {"allOf": [{"$ref": "#/components/schemas/X"}]}]})
    );
}

#[test]
fn request_bodies_are_closed_and_responses_are_not() -> anyhow::Result<()> {
    let document = document()?;
    let schemas = &document["components"]["schemas"];
    assert_eq!(
        schemas["CompanyInput"]["additionalProperties"],
        json!(false)
    );
    assert!(schemas["Company"].get("additionalProperties").is_none());
    Ok(())
}

#[test]
fn each_sample_body_matches_exactly_one_published_schema() -> anyhow::Result<()> {
    let document = document()?;
    let names = crate::platforms::authorization::authorization_schema_names();
    let checkers = names
        .iter()
        .map(|name| crate::validation::compile(json_schema_for(&document, name)?))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let tokens = json!({"accessToken": "a", "refreshToken": "r", "expiresIn": 60});
    let with = |fields: Value| {
        let mut body = tokens.clone();
        if let (Some(body), Some(fields)) = (body.as_object_mut(), fields.as_object()) {
            body.extend(fields.clone());
        }
        body
    };
    for (expected, body) in [
        (
            "ZohoBooksAuthorization",
            with(json!({"organizationId": "600012345"})),
        ),
        (
            "MollieAuthorization",
            with(json!({"organizationId": "org_12345"})),
        ),
        (
            "SandboxAuthorization",
            with(json!({"organizationId": "sbx-demo"})),
        ),
        (
            "XeroAuthorization",
            with(json!({"tenantId": "4f3c9b8e-1d2a-4c5b-9e8f-7a6b5c4d3e2f"})),
        ),
        (
            "BusinessCentralAuthorization",
            with(json!({
                "tenantId": "contoso.onmicrosoft.com", "environmentName": "production",
                "companyId": "4f3c9b8e-1d2a-4c5b-9e8f-7a6b5c4d3e2f"
            })),
        ),
        (
            "StripeAuthorization",
            json!({"stripeUserId": "acct_1", "accessToken": "sk"}),
        ),
        (
            "SageBusinessCloudAuthorization",
            with(json!({"businessId": "0d40342d0287cd6b13555c54afca6c90"})),
        ),
        (
            "WaveAuthorization",
            with(
                json!({"businessId": "QnVzaW5lc3M6NzE1MjQ3NjEtZjYxMS00ODk0LWE3NDgtNzg3MmYwODgyNWIw"}),
            ),
        ),
    ] {
        let matching: Vec<&String> = names
            .iter()
            .zip(&checkers)
            .filter(|(_, checker)| checker.field_errors(&body).is_empty())
            .map(|(name, _)| name)
            .collect();
        assert_eq!(matching, [expected], "{body}");
    }
    Ok(())
}
