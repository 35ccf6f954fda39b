"""The data and pictures of web pages and API answers: documents, the galaxy map, history."""
