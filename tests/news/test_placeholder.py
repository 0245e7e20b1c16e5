def test_the_news_service_answers_on_its_root(http):
    response = http.get("/")

    assert response.status_code == 200
    assert "news aggregation service" in response.text
