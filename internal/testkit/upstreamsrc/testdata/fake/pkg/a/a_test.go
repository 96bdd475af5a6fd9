package a

const testOnly = "ignored"
