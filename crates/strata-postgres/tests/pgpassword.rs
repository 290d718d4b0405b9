//! PGPASSWORD supplies the password a connection string leaves out. A test
//! binary of its own: it changes the process environment.

use strata_postgres::connect::ConnectionTarget;

#[test]
fn password_comes_from_pgpassword_when_the_string_has_none() {
    std::env::set_var("PGPASSWORD", "from-the-environment");
    let without = ConnectionTarget::parse("host=db.example user=app dbname=sales").unwrap();
    let with = ConnectionTarget::parse("host=db.example user=app password=in-the-string").unwrap();
    std::env::remove_var("PGPASSWORD");

    assert_eq!(
        without.config().get_password(),
        Some(&b"from-the-environment"[..])
    );
    assert_eq!(with.config().get_password(), Some(&b"in-the-string"[..]));
    for shown in [
        format!("{without:?}"),
        without.redacted(),
        format!("{with}"),
    ] {
        assert!(
            !shown.contains("from-the-environment") && !shown.contains("in-the-string"),
            "{shown}"
        );
    }
}
