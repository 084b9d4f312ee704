//! Square's lists beyond invoices, customers and orders: payments
//! (completed payments location by location, then completed refunds) and
//! the seller as company info. Sources: `NOTES.md`,
//! "Accounting model".

use chrono::{DateTime, Utc};

use super::SquareAuthorization;
use super::commerce::{LocationDetails, MerchantAnswer, PaymentsPage, RefundsPage};
use super::connector::SquareConnector;
use crate::data::company_info::{CompanyInfo, CompanyInfos};
use crate::data::payments::{Payment, Payments};
use crate::platforms::connector::{Changes, ConnectorError, Deletions, Fetched, Since, Syncs};
use crate::platforms::kit::records::Read;

/// The most payments or refunds a page holds (`limit`, at most 100).
pub const PAYMENTS_PAGE_SIZE: u64 = 100;

/// Where both lists start: Square lists only the last year's payments and
/// refunds unless `begin_time` says otherwise ("Default: The current time
/// minus one year"), and it opened for business in 2009.
const BEGINNING: &str = "2009-01-01T00:00:00Z";

/// An RFC 3339 time as Square's filters take it (UTC, to the second).
fn rfc3339(time: DateTime<Utc>) -> String {
    time.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

impl SquareConnector {
    /// A page of payments: each location's completed payments in turn
    /// (`GET /v2/payments` lists only the main location's unless asked for
    /// another), then every location's completed refunds (`GET /v2/refunds`
    /// lists them all), one more position after the locations. Since
    /// `since`, only what was updated (`updated_at_begin_time`).
    async fn payments(
        &self,
        credentials: &SquareAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        let position = self.position(credentials, cursor).await?;
        let positions = position.locations.len() + 1;
        let location = position.locations.get(position.index);
        let path = if location.is_some() {
            "payments"
        } else {
            "refunds"
        };
        let mut call = self
            .get(credentials, path, "a page of payments")
            .query("begin_time", BEGINNING)
            .query("sort_order", "ASC")
            .query("limit", self.limit(PAYMENTS_PAGE_SIZE));
        if let Some(location) = location {
            call = call.query("location_id", location);
        }
        if let Some(since) = since {
            call = call
                .query("updated_at_begin_time", rfc3339(since))
                .query("sort_field", "UPDATED_AT");
        }
        if let Some(given) = position.given() {
            call = call.query("cursor", given);
        }
        let (read, next): (Read<Payment>, _) = if location.is_some() {
            let body: PaymentsPage = self.http.json(&call).await?;
            let read = body.payments.read(|payment| {
                if payment.is_money_in() {
                    payment.into_record().map(Some)
                } else {
                    Ok(None)
                }
            });
            (read, body.cursor)
        } else {
            let body: RefundsPage = self.http.json(&call).await?;
            let read = body.refunds.read(|refund| {
                if refund.is_money_out() {
                    refund.into_record().map(Some)
                } else {
                    Ok(None)
                }
            });
            (read, body.cursor)
        };
        Ok(Fetched::read(read, position.next(next, positions)))
    }

    /// The seller and its main location.
    async fn seller(
        &self,
        credentials: &SquareAuthorization,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        let call = self.get(credentials, "merchants/me", "the seller");
        let answer: MerchantAnswer = self.http.json(&call).await?;
        let call = self.get(credentials, "locations", "the locations");
        let locations: LocationDetails = self.http.json(&call).await?;
        let main = answer.merchant.main_location_id.clone();
        let main = locations
            .locations
            .into_iter()
            .find(|location| Some(&location.id) == main.as_ref());
        Ok(Fetched::all(vec![answer.merchant.into_record(main)], None))
    }
}

/// What Square's changes say of deletions: payments and refunds are never
/// deleted (a cancelled or failed one keeps its id and is updated), so what
/// changed is all there is to fetch; the daily full fetch still runs.
const PAYMENT_CHANGES: Option<Changes> = Some(Changes::with(Deletions::OnlyByFullFetch));

impl Syncs<Payments> for SquareConnector {
    const CHANGES: Option<Changes> = PAYMENT_CHANGES;

    async fn page(
        &self,
        credentials: &SquareAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        self.payments(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &SquareAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        self.payments(credentials, Some(since.time), cursor).await
    }
}

/// The seller, two calls.
impl Syncs<CompanyInfos> for SquareConnector {
    async fn page(
        &self,
        credentials: &SquareAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        self.seller(credentials).await
    }
}
