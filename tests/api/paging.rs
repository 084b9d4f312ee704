//! The paged envelope on `GET /companies`: the matrix of sizes, links and
//! bad parameters.

use std::num::NonZeroU32;

use client::types::PagedCompany;

use crate::helpers::{TestApp, company_input, for_each_database, json};

async fn create_companies(app: &TestApp, count: usize) -> Vec<uuid::Uuid> {
    let mut ids = Vec::with_capacity(count);
    for index in 0..count {
        let body = company_input(&format!("Company {index:04}"), None);
        let created = app
            .client
            .create_company(&body)
            .await
            .expect("company created");
        ids.push(created.into_inner().company_id);
    }
    ids
}

async fn page(app: &TestApp, page: u32, page_size: u32) -> PagedCompany {
    app.client
        .list_companies(NonZeroU32::new(page), NonZeroU32::new(page_size))
        .await
        .expect("a page")
        .into_inner()
}

fn href(link: &Option<client::types::Link>) -> Option<&str> {
    link.as_ref().map(|link| link.href.as_str())
}

#[tokio::test]
async fn listing_no_companies_gives_an_empty_first_page_with_only_self_and_current() {
    for_each_database(async |app| {
        let listed = app.companies_first_page().await;
        assert!(listed.results.is_empty());
        assert_eq!(
            (listed.page_number, listed.page_size, listed.total_results),
            (1, 100, 0)
        );
        assert_eq!(listed.links.self_.href, "/companies");
        assert_eq!(listed.links.current.href, "/companies?page=1&pageSize=100");
        assert_eq!(href(&listed.links.next), None);
        assert_eq!(href(&listed.links.previous), None);

        // The raw body has no `next`/`previous` members at all, not nulls.
        let raw = json(app.get("/companies").await).await;
        let links = raw["_links"].as_object().expect("an object");
        assert_eq!(links.keys().collect::<Vec<_>>(), ["self", "current"]);
    })
    .await;
}

#[tokio::test]
async fn a_single_company_is_one_page_without_neighbours() {
    for_each_database(async |app| {
        let ids = create_companies(app, 1).await;
        let listed = page(app, 1, 100).await;
        assert_eq!(
            listed
                .results
                .iter()
                .map(|c| c.company_id)
                .collect::<Vec<_>>(),
            ids
        );
        assert_eq!(listed.total_results, 1);
        assert!(listed.links.next.is_none() && listed.links.previous.is_none());
    })
    .await;
}

#[tokio::test]
async fn exactly_one_full_page_has_no_next_link() {
    for_each_database(async |app| {
        create_companies(app, 3).await;
        let listed = page(app, 1, 3).await;
        assert_eq!((listed.results.len(), listed.total_results), (3, 3));
        assert_eq!(href(&listed.links.next), None);
        let beyond = page(app, 2, 3).await;
        assert!(beyond.results.is_empty());
        assert_eq!(
            href(&beyond.links.previous),
            Some("/companies?page=1&pageSize=3")
        );
    })
    .await;
}

#[tokio::test]
async fn full_pages_link_first_middle_last_and_beyond_the_last() {
    for_each_database(async |app| {
        let ids = create_companies(app, 9).await;

        let first = page(app, 1, 3).await;
        assert_eq!(first.links.current.href, "/companies?page=1&pageSize=3");
        assert_eq!(
            href(&first.links.next),
            Some("/companies?page=2&pageSize=3")
        );
        assert_eq!(href(&first.links.previous), None);

        let middle = page(app, 2, 3).await;
        assert_eq!(
            href(&middle.links.next),
            Some("/companies?page=3&pageSize=3")
        );
        assert_eq!(
            href(&middle.links.previous),
            Some("/companies?page=1&pageSize=3")
        );

        let last = page(app, 3, 3).await;
        assert_eq!(href(&last.links.next), None);
        assert_eq!(
            href(&last.links.previous),
            Some("/companies?page=2&pageSize=3")
        );

        let beyond = page(app, 7, 3).await;
        assert!(beyond.results.is_empty());
        assert_eq!((beyond.page_number, beyond.total_results), (7, 9));
        assert_eq!(href(&beyond.links.next), None);
        assert_eq!(
            href(&beyond.links.previous),
            Some("/companies?page=3&pageSize=3")
        );

        // Oldest first, each company exactly once across the pages.
        let seen: Vec<_> = [first, middle, last]
            .into_iter()
            .flat_map(|page| page.results)
            .map(|company| company.company_id)
            .collect();
        assert_eq!(seen, ids);
    })
    .await;
}

#[tokio::test]
async fn full_pages_plus_one_put_the_last_record_alone_on_the_last_page() {
    for_each_database(async |app| {
        let ids = create_companies(app, 10).await;
        let last = page(app, 4, 3).await;
        assert_eq!(
            last.results
                .iter()
                .map(|c| c.company_id)
                .collect::<Vec<_>>(),
            ids[9..]
        );
        assert_eq!(last.total_results, 10);
        assert_eq!(href(&last.links.next), None);
        assert_eq!(
            href(&last.links.previous),
            Some("/companies?page=3&pageSize=3")
        );
        assert_eq!(
            href(&page(app, 3, 3).await.links.next),
            Some("/companies?page=4&pageSize=3")
        );
    })
    .await;
}

#[tokio::test]
async fn default_parameters_give_100_per_page_and_5000_takes_everything() {
    for_each_database(async |app| {
        let ids = create_companies(app, 101).await;
        let first = app.companies_first_page().await;
        assert_eq!(
            (first.page_number, first.page_size, first.results.len()),
            (1, 100, 100)
        );
        assert_eq!(first.total_results, 101);
        assert_eq!(
            href(&first.links.next),
            Some("/companies?page=2&pageSize=100")
        );

        let everything = page(app, 1, 5000).await;
        assert_eq!(everything.page_size, 5000);
        assert_eq!(
            everything
                .results
                .iter()
                .map(|c| c.company_id)
                .collect::<Vec<_>>(),
            ids
        );
        assert_eq!(href(&everything.links.next), None);
        assert_eq!(
            everything.links.current.href,
            "/companies?page=1&pageSize=5000"
        );
    })
    .await;
}

#[tokio::test]
async fn following_next_links_visits_every_company_once_in_order() {
    for_each_database(async |app| {
        let ids = create_companies(app, 7).await;
        let mut seen = Vec::new();
        let mut next = Some("/companies?pageSize=2".to_owned());
        while let Some(path) = next {
            let body = json(app.get(&path).await).await;
            let listed: PagedCompany = serde_json::from_value(body).expect("a page");
            seen.extend(listed.results.iter().map(|company| company.company_id));
            next = listed.links.next.map(|link| link.href);
        }
        assert_eq!(seen, ids);
    })
    .await;
}

#[tokio::test]
async fn malformed_paging_parameters_answer_400_naming_the_parameter_and_range() {
    for_each_database(async |app| {
        create_companies(app, 2).await;
        let cases = [
            ("page=0", "page", "from 1 to 2147483647"),
            ("page=-1", "page", "from 1 to 2147483647"),
            ("page=abc", "page", "from 1 to 2147483647"),
            ("page=", "page", "from 1 to 2147483647"),
            ("page=1.5", "page", "from 1 to 2147483647"),
            ("page=99999999999999999999", "page", "from 1 to 2147483647"),
            ("pageSize=0", "pageSize", "from 1 to 5000"),
            ("pageSize=5001", "pageSize", "from 1 to 5000"),
            ("pageSize=-5", "pageSize", "from 1 to 5000"),
            ("pageSize=ten", "pageSize", "from 1 to 5000"),
            ("pageSize=", "pageSize", "from 1 to 5000"),
            ("pageSize=4294967296", "pageSize", "from 1 to 5000"),
        ];
        for (query, parameter, range) in cases {
            let response = app.get(&format!("/companies?{query}")).await;
            assert_eq!(response.status(), 400, "{query}");
            let body = json(response).await;
            assert_eq!(body["statusCode"], 400, "{query}");
            let errors = body["validation"]["errors"]
                .as_array()
                .expect("validation errors");
            assert_eq!(errors.len(), 1, "{query}: {body}");
            assert_eq!(errors[0]["itemId"], parameter, "{query}");
            let message = errors[0]["message"].as_str().expect("a message");
            assert!(message.contains(range), "{query}: {message}");
        }
        // Nothing was clamped or lost along the way.
        assert_eq!(page(app, 1, 100).await.total_results, 2);
    })
    .await;
}
