package named

const Label = "example.io/label"
